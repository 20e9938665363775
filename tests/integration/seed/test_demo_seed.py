"""The demo seed on PostgreSQL: workspaces, sign-ins and access, datasets, saved queries, reports,
a message template, schedules in every state, idempotence."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from flask import current_app
from sqlalchemy import func, select

from app.domain.sources.catalog import DATASETS
from app.domain.sources.query_spec import validate_definition
from app.domain.sources.report_spec import validate_report
from app.domain.timing.timetable import Timetable, next_occurrence
from app.extensions import db
from app.models import (
    AuditEvent,
    CommunicationTemplate,
    Membership,
    Person,
    Report,
    SavedQuery,
    Schedule,
    ScheduleRun,
    ScheduleUnsubscribe,
    Shift,
    Team,
    TeamMember,
    TimeOffRequest,
    TimesheetEntry,
    Workspace,
)
from app.seed_data import HOSTILE_VALUES
from app.services.accounts.authentication import authenticate
from app.services.demo.data_workspaces import DEMO_LOGINS, DEMO_WORKSPACE, OTHER_WORKSPACE, TEST_RECORDS_NAME
from app.services.demo.demo_seed import seed_demo
from app.services.sources.reports import STORED_FIELDS

ROWS = 500
EVERY_DATASET = {"teams", "people", "shifts", "time_off_requests", "timesheet_entries"}
ROW_TABLES = (Shift, TimeOffRequest, TimesheetEntry)


@pytest.fixture
def seeded(app_context):
    assert seed_demo(ROWS) is True


def _workspace(name: str) -> Workspace:
    return db.session.execute(select(Workspace).where(Workspace.name == name)).scalar_one()


def _person(email: str) -> Person:
    return db.session.execute(select(Person).where(Person.email == email)).scalar_one()


def _memberships(email: str) -> list[Membership]:
    return list(_person(email).memberships)


def _count(model, *conditions) -> int:
    return db.session.execute(select(func.count()).select_from(model).where(*conditions)).scalar_one()


def test_seed_creates_the_two_demo_workspaces(seeded):
    """The seed creates the main workspace and a second one, both live."""
    workspaces = db.session.execute(select(Workspace.name, Workspace.status)).all()
    assert sorted(workspaces) == sorted([(DEMO_WORKSPACE, "live"), (OTHER_WORKSPACE, "live")])


def test_admin_holds_the_admin_role_and_both_schedule_grants(seeded):
    """The administrator is an admin of the main workspace with schedule authority and external recipients."""
    [membership] = _memberships("admin@northwind.example")
    assert membership.workspace.name == DEMO_WORKSPACE
    assert membership.role == "admin"
    assert set(membership.grants) == {"schedules.manage", "schedules.external_recipients"}
    assert set(membership.dataset_grants) == EVERY_DATASET


def test_scoped_member_sees_the_intensive_care_team_only_and_every_dataset_but_people(seeded):
    """The scoped member's row scope is the main workspace's ICU team; they lack the people dataset."""
    [membership] = _memberships("scoped@northwind.example")
    icu = db.session.execute(
        select(Team).where(Team.workspace_id == _workspace(DEMO_WORKSPACE).id, Team.code == "ICU")
    ).scalar_one()
    assert membership.role == "member"
    assert membership.workspace.name == DEMO_WORKSPACE
    assert membership.team_scope == [icu.id]
    assert set(membership.dataset_grants) == EVERY_DATASET - {"people"}
    assert membership.grants == []


def test_unscoped_member_has_every_dataset_and_no_row_scope(seeded):
    """The plain member reads every dataset of the main workspace, every team's rows."""
    [membership] = _memberships("member@northwind.example")
    assert membership.workspace.name == DEMO_WORKSPACE
    assert membership.role == "member"
    assert membership.team_scope is None
    assert set(membership.dataset_grants) == EVERY_DATASET
    assert membership.grants == []


def test_globex_member_belongs_to_the_other_workspace_only(seeded):
    """The Globex sign-in is a member of the second workspace and of nothing else."""
    [membership] = _memberships("member@globex.example")
    assert membership.workspace.name == OTHER_WORKSPACE
    assert membership.role == "member"


def test_staff_person_has_staff_permissions_and_no_membership(seeded):
    """The Rhythm staff sign-in is staff with view and execute permissions and belongs to no workspace."""
    staff = _person("staff@rhythm.example")
    assert staff.is_staff is True
    assert sorted(staff.staff_permissions) == ["staff.execute", "staff.view"]
    assert staff.memberships == []


def test_every_demo_login_signs_in_with_its_password(seeded):
    """Each email and password printed for the demo signs that person in."""
    for email, password, _who in DEMO_LOGINS:
        person = authenticate(email, password)
        assert person is not None and person.email == email


def test_second_seed_returns_false_and_changes_no_counts(seeded):
    """Seeding again reports that nothing was done and leaves every table's row count as it was."""
    tables = db.metadata.sorted_tables
    before = {t.name: db.session.execute(select(func.count()).select_from(t)).scalar_one() for t in tables}
    assert seed_demo(ROWS) is False
    after = {t.name: db.session.execute(select(func.count()).select_from(t)).scalar_one() for t in tables}
    assert after == before


@pytest.mark.parametrize(
    ("model", "column"),
    [(TimesheetEntry, "note"), (TimesheetEntry, "project"), (Shift, "notes"), (TimeOffRequest, "reason")],
    ids=["timesheet-note", "timesheet-project", "shift-notes", "time-off-reason"],
)
def test_every_hostile_value_appears_in_the_main_workspace(seeded, model, column):
    """Every hostile value, control characters and surrounding spaces intact, is stored in this text column."""
    stored = set(
        db.session.execute(
            select(getattr(model, column)).where(model.workspace_id == _workspace(DEMO_WORKSPACE).id)
        ).scalars()
    )
    assert set(HOSTILE_VALUES) - stored == set()


def test_formula_looking_values_are_employee_names(seeded):
    """Names beginning with =, +, - and @ are among the main workspace's employees."""
    names = db.session.execute(
        select(TeamMember.full_name).where(TeamMember.workspace_id == _workspace(DEMO_WORKSPACE).id)
    ).scalars()
    assert {name[0] for name in names if name[:1] in "=+-@"} == set("=+-@")


def test_employee_names_cover_non_latin_scripts(seeded):
    """Employee names of the main workspace include Cyrillic, Greek, CJK, Hangul, Arabic, Hebrew, Vietnamese, emoji."""
    names = "\n".join(
        db.session.execute(
            select(TeamMember.full_name).where(TeamMember.workspace_id == _workspace(DEMO_WORKSPACE).id)
        ).scalars()
    )
    scripts = {
        "cyrillic": "[\u0400-\u04ff]",
        "greek": "[\u0370-\u03ff]",
        "cjk": "[\u4e00-\u9fff]",
        "hangul": "[\uac00-\ud7af]",
        "arabic": "[\u0600-\u06ff]",
        "hebrew": "[\u0590-\u05ff]",
        "vietnamese": "[\u1ea0-\u1eff]",
        "emoji": "[\U0001f300-\U0001faff]",
    }
    assert [script for script, pattern in scripts.items() if not re.search(pattern, names)] == []


def test_each_workspace_has_sixty_employees_across_several_coded_teams(seeded):
    """Both workspaces get sixty employees (the main one's test records besides) spread over at least
    four teams with distinct codes and locations."""
    for name in (DEMO_WORKSPACE, OTHER_WORKSPACE):
        workspace_id = _workspace(name).id
        teams = db.session.execute(select(Team).where(Team.workspace_id == workspace_id)).scalars().all()
        assert len(teams) >= 4
        assert len({team.code for team in teams}) == len(teams)
        assert all(team.location for team in teams)
        employees = (TeamMember.workspace_id == workspace_id, TeamMember.team_name != TEST_RECORDS_NAME)
        assert _count(TeamMember, *employees) == 60
        staffed = db.session.execute(
            select(func.count(func.distinct(TeamMember.team_id))).where(TeamMember.workspace_id == workspace_id)
        ).scalar_one()
        assert staffed == len(teams)


def test_main_workspace_holds_exactly_the_requested_timesheet_entries(seeded):
    """The main workspace gets `rows` timesheet entries; the other workspace gets a tenth of that."""
    assert _count(TimesheetEntry, TimesheetEntry.workspace_id == _workspace(DEMO_WORKSPACE).id) == ROWS
    assert _count(TimesheetEntry, TimesheetEntry.workspace_id == _workspace(OTHER_WORKSPACE).id) == ROWS // 10


def test_timesheet_entries_cover_the_last_ninety_days_up_to_today(seeded):
    """Work dates run from 89 days ago to today (UTC), and no entry is recorded in the future."""
    today = datetime.now(UTC).date()
    first, last, latest_record = db.session.execute(
        select(
            func.min(TimesheetEntry.work_date), func.max(TimesheetEntry.work_date), func.max(TimesheetEntry.recorded_at)
        )
    ).one()
    assert (first, last) == (today - timedelta(days=89), today)
    assert latest_record <= datetime.now(UTC)


def test_scoped_team_has_approved_entries_in_the_last_seven_days(seeded):
    """A "last 7 days" filter on approved entries finds rows even within the scoped member's team."""
    [membership] = _memberships("scoped@northwind.example")
    since = datetime.now(UTC).date() - timedelta(days=6)
    recent = _count(
        TimesheetEntry,
        TimesheetEntry.workspace_id == membership.workspace_id,
        TimesheetEntry.team_id.in_(membership.team_scope),
        TimesheetEntry.work_date >= since,
        TimesheetEntry.approved.is_(True),
    )
    assert recent > 0


def test_every_dataset_has_rows_in_both_workspaces(seeded):
    """Each catalog dataset's table holds rows for the main workspace and for the other one."""
    for name in (DEMO_WORKSPACE, OTHER_WORKSPACE):
        workspace_id = _workspace(name).id
        for dataset in DATASETS.values():
            count = db.session.execute(
                select(func.count()).select_from(dataset.table).where(dataset.table.c.workspace_id == workspace_id)
            ).scalar_one()
            assert count > 0, (name, dataset.name)


def test_denormalised_team_and_person_names_match_the_referenced_rows(seeded):
    """team_name and person_name on every data row equal the names of the team and employee they reference."""
    assert _count(TeamMember, TeamMember.team_id == Team.id, TeamMember.team_name != Team.name) == 0
    for model in ROW_TABLES:
        total = _count(model)
        matching = _count(
            model,
            model.team_id == Team.id,
            model.person_id == TeamMember.id,
            model.team_name == Team.name,
            model.person_name == TeamMember.full_name,
        )
        assert total > 0 and matching == total, model.__tablename__


def test_rows_never_reference_teams_or_employees_of_another_workspace(seeded):
    """No data row points at a team or an employee that belongs to a different workspace."""
    assert _count(TeamMember, TeamMember.team_id == Team.id, Team.workspace_id != TeamMember.workspace_id) == 0
    for model in ROW_TABLES:
        crossing = _count(
            model,
            model.team_id == Team.id,
            model.person_id == TeamMember.id,
            (Team.workspace_id != model.workspace_id) | (TeamMember.workspace_id != model.workspace_id),
        )
        assert crossing == 0, model.__tablename__


def test_admin_saved_queries_are_valid_definitions(seeded):
    """The administrator's saved queries are stored in the normal form validate_definition returns."""
    admin = _person("admin@northwind.example")
    queries = db.session.execute(select(SavedQuery).where(SavedQuery.owner_id == admin.id)).scalars().all()
    max_rows = current_app.config["SETTINGS"].max_export_rows
    assert {q.name for q in queries} >= {"Approved hours last 7 days", "Team roster", "Pending time off"}
    assert all(q.workspace_id == _workspace(DEMO_WORKSPACE).id for q in queries)
    for query in queries:
        assert validate_definition(query.definition(), max_rows) == query.definition()


def test_approved_hours_query_filters_approved_entries_of_the_last_seven_days(seeded):
    """ "Approved hours last 7 days" has the last_7_days parameter on work_date and an approved filter."""
    query = db.session.execute(select(SavedQuery).where(SavedQuery.name == "Approved hours last 7 days")).scalar_one()
    assert query.dataset == "timesheet_entries"
    assert query.parameters == [{"column": "work_date", "range": "last_7_days"}]
    assert {"column": "approved", "op": "is_true", "value": None} in query.filters


def test_admin_sample_reports_of_each_kind_are_stored_as_validate_report_returns_them(seeded):
    """The administrator owns a coded, a table and a summary report over the starter queries, and a
    table of the test records, each in normal form."""
    admin = _person("admin@northwind.example")
    rows = db.session.execute(
        select(Report, SavedQuery)
        .join(SavedQuery, SavedQuery.id == Report.source_query_id)
        .where(Report.owner_id == admin.id)
    ).all()
    assert sorted((report.name, report.kind, query.name) for report, query in rows) == [
        ("Hours by team", "coded", "Approved hours last 7 days"),
        ("Pending time off by team", "summary", "Pending time off"),
        ("Team roster", "table", "Team roster"),
        ("Test records (edge cases)", "table", "Test records (edge cases)"),
    ]
    workspace_id = _workspace(DEMO_WORKSPACE).id
    for report, query in rows:
        assert report.workspace_id == query.workspace_id == workspace_id
        assert report.version == 1
        stored = {key: getattr(report, key) for key in STORED_FIELDS}
        definition = {"name": report.name, **report.layout(), **report.print_params()}
        assert validate_report(definition, query.dataset, list(query.columns)) == stored, report.name
    coded = next(report for report, _ in rows if report.kind == "coded")
    teams = db.session.execute(select(Team.name).where(Team.workspace_id == workspace_id)).scalars()
    assert coded.code_column == "team_name"
    assert set(coded.code_descriptions) == set(teams)


def _schedule(name: str) -> Schedule:
    return db.session.execute(select(Schedule).where(Schedule.name == name)).scalar_one()


def test_the_message_template_has_a_published_version_and_a_draft(seeded):
    """Version 1 is published (with its time), version 2 is a draft of the same template."""
    template = db.session.execute(select(CommunicationTemplate)).scalar_one()
    assert template.workspace_id == _workspace(DEMO_WORKSPACE).id
    assert [(v.number, v.status, v.published_at is not None) for v in template.versions] == [
        (1, "published", True),
        (2, "draft", False),
    ]


def test_the_demo_workspace_has_four_schedules_one_per_state(seeded):
    """Active daily query, active weekly report, paused by a legacy import, and active after a failed run."""
    schedules = db.session.execute(select(Schedule).order_by(Schedule.id)).scalars().all()
    assert [(s.kind, s.format, s.timetable["kind"], s.status, s.pause_reason) for s in schedules] == [
        ("query", "csv", "daily", "active", None),
        ("report", "pdf", "weekly", "active", None),
        ("query", "xlsx", "monthly", "paused", "legacy_import"),
        ("report", "xlsx", "weekly", "active", None),
    ]
    admin = _person("admin@northwind.example")
    assert {(s.workspace_id, s.owner_id) for s in schedules} == {(_workspace(DEMO_WORKSPACE).id, admin.id)}


def test_every_demo_schedule_has_a_valid_timetable_and_its_next_occurrence(seeded):
    """Each timetable reads back unchanged, and next_occurrence_at is the first occurrence after the seed."""
    for schedule in db.session.execute(select(Schedule)).scalars():
        timetable = Timetable.from_json(schedule.timetable, "UTC")
        assert timetable.to_json() == schedule.timetable
        assert schedule.next_occurrence_at == next_occurrence(
            timetable, schedule.next_occurrence_at - timedelta(seconds=1)
        ) and schedule.next_occurrence_at > datetime.now(UTC) - timedelta(minutes=5)


def test_query_schedules_hold_the_saved_query_snapshot_and_report_schedules_the_version_seen(seeded):
    max_rows = current_app.config["SETTINGS"].max_export_rows
    for schedule in db.session.execute(select(Schedule)).scalars():
        if schedule.kind == "query":
            query = db.session.get(SavedQuery, schedule.source_query_id)
            assert schedule.query_definition == validate_definition(query.definition(), max_rows)
            assert schedule.query_version == query.version
        else:
            assert schedule.report_version_seen == db.session.get(Report, schedule.report_id).version


def test_the_daily_schedule_sends_to_two_people_and_an_outside_address_its_owner_may_add(seeded):
    """Two members as person recipients and one external address; the owner holds the external grant."""
    schedule = _schedule("Approved hours, every morning")
    members = {m.person_id for m in _workspace(DEMO_WORKSPACE).memberships}
    people = [r.person_id for r in schedule.recipients if r.person_id is not None]
    assert len(people) == 2 and set(people) <= members
    assert [(r.email, r.address_key) for r in schedule.recipients if r.email] == [
        ("payroll@contoso.example", "payroll@contoso.example")
    ]
    [owner_membership] = _memberships("admin@northwind.example")
    assert "schedules.external_recipients" in owner_membership.grants
    assert schedule.template_version_id is not None


def test_the_legacy_schedule_keeps_its_old_id_and_has_its_import_audited(seeded):
    schedule = _schedule("Pending time off (old system)")
    assert (schedule.legacy_ref, schedule.paused_at is not None) == ("LEGACY-0042", True)
    events = db.session.execute(select(AuditEvent).where(AuditEvent.subject_id == schedule.id)).scalars().all()
    assert [(e.action, e.subject_type) for e in events] == [("schedule.legacy_imported", "schedule")]


def test_the_failed_run_has_two_failed_attempts_and_failed_and_skipped_recipient_rows(seeded):
    """The run failed with the second attempt's code; its recipients are failed (no file) and skipped (unsubscribed)."""
    schedule = _schedule("Team roster for HR, Fridays")
    [run] = db.session.execute(select(ScheduleRun)).scalars().all()
    assert (run.schedule_id, run.status, run.attempt_count, run.failure_code) == (
        schedule.id,
        "failed",
        2,
        "invalid_request",
    )
    assert [(a.number, a.outcome, a.error_code) for a in run.attempts] == [
        (1, "failed", "storage_error"),
        (2, "failed", "invalid_request"),
    ]
    assert run.occurrence_at == schedule.last_occurrence_at < datetime.now(UTC)
    assert all(a.started_at < a.ended_at <= run.completed_at < datetime.now(UTC) for a in run.attempts)
    assert sorted((d.status, d.skip_reason) for d in run.deliveries) == [
        ("failed", None),
        ("skipped", "recipient_unsubscribed"),
    ]
    skipped = next(d for d in run.deliveries if d.status == "skipped")
    unsubscribed = db.session.execute(select(ScheduleUnsubscribe)).scalar_one()
    assert (unsubscribed.schedule_id, unsubscribed.address_key) == (schedule.id, skipped.address_key)
    assert schedule.failure_streak == 1
