"""Schedules to run: an owner with a saved query over a few timesheet rows, recipients, and mail
sent to the real aiosmtpd server of tests/fixtures/smtp.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest

from app.communications import Mailer
from app.extensions import db
from app.models import Membership, Person, SavedQuery, Workspace
from app.models.schedule import RunTrigger, Schedule, ScheduleRecipient, ScheduleRun
from app.models.types import utcnow
from app.services.schedules.schedule_admission import admit_run
from tests import factories


@dataclass
class RunScenario:
    workspace: Workspace
    owner: Person
    owner_membership: Membership
    colleague: Person
    colleague_membership: Membership
    query: SavedQuery

    def make_schedule(self, recipients=("colleague",), **overrides) -> Schedule:
        values = {
            "workspace_id": self.workspace.id,
            "name": "Weekly hours “Zoë” <b>&amp;",
            "kind": "query",
            "owner_id": self.owner.id,
            "format": "csv",
            "source_query_id": self.query.id,
            "query_definition": self.query.definition(),
            "query_version": self.query.version,
            "timetable": {"kind": "hourly", "minute": 0, "zone": "Europe/Berlin"},
            "custom_message": "Hello team,\nhere is this week's file.",
        }
        schedule = Schedule(**{**values, **overrides})
        for position, recipient in enumerate(recipients):
            if recipient == "owner":
                entry = ScheduleRecipient(person_id=self.owner.id, address_key=f"person:{self.owner.id}")
            elif recipient == "colleague":
                entry = ScheduleRecipient(person_id=self.colleague.id, address_key=f"person:{self.colleague.id}")
            else:
                entry = ScheduleRecipient(email=recipient, address_key=recipient.lower())
            entry.position = position
            schedule.recipients.append(entry)
        db.session.add(schedule)
        db.session.commit()
        return schedule

    def admit(self, schedule: Schedule) -> ScheduleRun:
        run = admit_run(
            schedule_id=schedule.id,
            workspace_id=schedule.workspace_id,
            occurrence_at=(utcnow() - timedelta(minutes=5)).replace(second=0, microsecond=0),
            trigger=RunTrigger.MANUAL,
        )
        assert run is not None
        return run


@pytest.fixture
def run_scenario(app_context) -> RunScenario:
    workspace = factories.make_workspace(name="Harbour Health")
    owner_membership = factories.make_member(workspace, grants=["schedules.external_recipients"])
    colleague_membership = factories.make_member(workspace)
    team = factories.make_team(workspace, name="Night team")
    employee = factories.make_team_member(team, full_name="Zoë Ødegaard-Łukasiewicz")
    for value in factories.hostile_values()[:5]:
        factories.make_timesheet_entry(employee, note=value, project=value[:200])
    query = factories.make_query(workspace, owner_membership.person, name="Hours")
    return RunScenario(
        workspace, owner_membership.person, owner_membership, colleague_membership.person, colleague_membership, query
    )


@pytest.fixture
def mail_to_smtp_server(app, smtp_settings):
    """This process's mailer sends to the test SMTP server."""
    previous = app.extensions.get("rhythm_mailer")
    app.extensions["rhythm_mailer"] = Mailer(smtp_settings)
    yield
    if previous is None:
        app.extensions.pop("rhythm_mailer", None)
    else:
        app.extensions["rhythm_mailer"] = previous
