"""Writes the demo's workspaces and people (data_workspaces.py): the workspaces, the sign-ins and
their memberships, each workspace's teams, its employees and the main workspace's test records.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from app.extensions import db
from app.models import Membership, Person, Team, TeamMember, Workspace
from app.services.accounts.authentication import hash_password
from app.services.demo.data_workspaces import (
    EMPLOYEES_PER_WORKSPACE,
    LOGINS,
    NAME_POOL,
    PLANS,
    TEST_RECORD_NAMES,
    Login,
    WorkspacePlan,
)
from app.services.demo.dataset_rows import Worker


@dataclass(frozen=True)
class SeededWorkspace:
    """A workspace as written, with the employees its dataset rows are drawn for."""

    row: Workspace
    plan: WorkspacePlan
    # The active employees.
    workers: list[Worker]
    # The test records (module docstring of demo_seed.py); none outside the main workspace.
    test_records: list[Worker]


def add_workspaces_and_people(rng: random.Random, now: datetime) -> tuple[list[SeededWorkspace], dict[Login, Person]]:
    """Every workspace of PLANS with its teams and employees, and every sign-in with its membership."""
    workspaces = [
        Workspace(name=plan.name, status="live", time_zone=plan.time_zone, created_at=now - plan.age) for plan in PLANS
    ]
    people = {login: _person(login) for login in LOGINS}
    db.session.add_all([*workspaces, *people.values()])
    db.session.flush()
    teams = [_add_teams(workspace, plan, now) for workspace, plan in zip(workspaces, PLANS, strict=True)]
    _add_memberships(people, {workspace.name: workspace for workspace in workspaces}, teams)
    # Every name is drawn before any employee's details: the order the seeded generator has always
    # been read in, which keeps the demo's rows what they have been.
    names = [_employee_names(rng, plan) for plan in PLANS]
    today = now.date()
    workers = [
        _add_employees(rng, workspace, plan, real_teams, drawn, today)
        for workspace, plan, (real_teams, _test_team), drawn in zip(workspaces, PLANS, teams, names, strict=True)
    ]
    test_records = [
        _add_test_records(workspace, plan, test_team, today)
        for workspace, plan, (_real_teams, test_team) in zip(workspaces, PLANS, teams, strict=True)
    ]
    seeded = [SeededWorkspace(*parts) for parts in zip(workspaces, PLANS, workers, test_records, strict=True)]
    return seeded, people


def _person(login: Login) -> Person:
    person = Person(email=login.email, name=login.name, password_hash=hash_password(login.password))
    if login.staff_permissions:
        person.is_staff = True
        person.staff_permissions = list(login.staff_permissions)
    return person


def _add_memberships(
    people: dict[Login, Person], workspaces: dict[str, Workspace], teams: list[tuple[list[Team], Team | None]]
) -> None:
    """Each sign-in's membership of its workspace; a team scope names its team by code."""
    team_ids = {(team.workspace_id, team.code): team.id for real_teams, _test_team in teams for team in real_teams}
    memberships = []
    for login, person in people.items():
        if login.workspace is None:
            continue
        workspace = workspaces[login.workspace]
        memberships.append(
            Membership(
                workspace_id=workspace.id,
                person_id=person.id,
                role=login.role,
                grants=list(login.grants),
                dataset_grants=list(login.datasets),
                team_scope=None if login.team_scope is None else [team_ids[(workspace.id, login.team_scope)]],
            )
        )
    db.session.add_all(memberships)


def _employee_names(rng: random.Random, plan: WorkspacePlan) -> list[str]:
    """The plan's named employees, then different names of the pool up to EMPLOYEES_PER_WORKSPACE."""
    taken = plan.named_employees
    return [*taken, *_sample_names(rng, EMPLOYEES_PER_WORKSPACE - len(taken), taken)]


def _sample_names(rng: random.Random, count: int, taken: Sequence[str]) -> list[str]:
    """`count` different names of the pool, none of them `taken` already."""
    return [name for name, _ in rng.sample([entry for entry in NAME_POOL if entry[0] not in taken], count)]


def _add_teams(workspace: Workspace, plan: WorkspacePlan, now: datetime) -> tuple[list[Team], Team | None]:
    """The plan's teams, and its team of test records if it has one (apart: no real employee joins it)."""
    teams = [
        Team(
            workspace_id=workspace.id,
            code=place.code,
            name=place.name,
            location=place.location,
            created_at=(now - timedelta(days=800 - 37 * i)).replace(microsecond=0),
        )
        for i, place in enumerate(plan.places)
    ]
    db.session.add_all(teams)
    db.session.flush()
    if plan.test_team is None:
        return teams, None
    return teams[:-1], teams[-1]


def _add_employees(
    rng: random.Random, workspace: Workspace, plan: WorkspacePlan, teams: list[Team], names: list[str], today: date
) -> list[Worker]:
    """The workspace's employees (every team gets at least three); returns the active ones."""
    emails = dict(NAME_POOL)
    sizes = [size for _place, size in plan.teams]
    job_weights = [weight for *_rest, weight in plan.jobs]
    employees: list[TeamMember] = []
    for i, full_name in enumerate(names):
        team = teams[i % len(teams)] if i < 3 * len(teams) else rng.choices(teams, weights=sizes)[0]
        title, low, high, _weight = rng.choices(plan.jobs, weights=job_weights)[0]
        local = emails.get(full_name) or f"employee.{len(employees) + 1:03d}"
        employees.append(
            TeamMember(
                workspace_id=workspace.id,
                team_id=team.id,
                team_name=team.name,
                full_name=full_name,
                email=f"{local}@{plan.email_domain}",
                job_title=title,
                hourly_rate=Decimal(str(round(rng.uniform(low, high) * 4) / 4)).quantize(Decimal("0.01")),
                started_on=today - timedelta(days=rng.randrange(30, 15 * 365)),
                active=rng.random() >= 0.05,
            )
        )
    return _active_workers(employees)


def _add_test_records(workspace: Workspace, plan: WorkspacePlan, team: Team | None, today: date) -> list[Worker]:
    """The test records: one active employee of the test team per hostile value no one is called."""
    if team is None:
        return []
    records = [
        TeamMember(
            workspace_id=workspace.id,
            team_id=team.id,
            team_name=team.name,
            full_name=name,
            email=f"test.record.{number:02d}@{plan.email_domain}",
            job_title="Test record",
            hourly_rate=Decimal("10.00"),
            started_on=today - timedelta(days=365),
            active=True,
        )
        for number, name in enumerate(TEST_RECORD_NAMES, start=1)
    ]
    return _active_workers(records)


def _active_workers(employees: list[TeamMember]) -> list[Worker]:
    """Writes the employees; returns the active ones as their dataset rows carry them."""
    db.session.add_all(employees)
    db.session.flush()
    return [Worker(e.team_id, e.team_name, e.id, e.full_name, e.job_title) for e in employees if e.active]
