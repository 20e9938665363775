"""Run as each recipient: every person's file is made with their own access at run time, people
whose access makes the same file share it, one who lost access is skipped and the others still get
theirs, each link opens only its person's file, and the send condition applies to each file.
Run in this process against PostgreSQL, mailing the real aiosmtpd server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from app.domain.errors import ValidationError
from app.domain.people.access import current_context
from app.extensions import db
from app.models import ExportFile
from app.models.schedule import RecipientDelivery, RunTrigger, Schedule, ScheduleRecipient, ScheduleRun, ScheduleRunFile
from app.models.types import database_clock
from app.services.files.export_runner import run_export_file
from app.services.files.file_requests import QueryFileOptions, queued_query_file
from app.services.pages.public_link_tokens import link_token
from app.services.schedules.schedule_admission import admit_run
from app.services.schedules.schedule_form import input_of, save_schedule
from app.services.schedules.schedule_runs import process_run
from app.storage import get_storage
from tests import factories


class Ward:
    """A workspace of wards (teams) with their hours, and managers who each see some wards."""

    def __init__(self):
        self.workspace = factories.make_workspace(name="St Mary's")
        self.owner = factories.make_member(self.workspace, role="admin").person
        self.north, self.south, self.east = (
            factories.make_team(self.workspace, name=n) for n in ("North", "South", "East")
        )
        for team, hours in ((self.north, 3), (self.south, 2)):
            employee = factories.make_team_member(team)
            for _ in range(hours):
                factories.make_timesheet_entry(employee, note=f"{team.name} shift")
        self.query = factories.make_query(self.workspace, self.owner, name="Overtime")

    def manager(self, *teams, **overrides):
        return factories.make_member(self.workspace, team_scope=[team.id for team in teams], **overrides).person

    def schedule(self, people, **overrides) -> Schedule:
        schedule = factories.make_schedule(self.query, self.owner, run_as_recipients=True, **overrides)
        schedule.recipients = [
            ScheduleRecipient(person_id=person.id, address_key=f"person:{person.id}", position=position)
            for position, person in enumerate(people)
        ]
        db.session.commit()
        return schedule


def admitted(schedule: Schedule) -> ScheduleRun:
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=schedule.workspace_id,
        occurrence_at=datetime(2026, 12, 1, 6, 0, tzinfo=UTC),
        trigger=RunTrigger.TIMETABLE,
    )
    assert run is not None
    return run


def stored(export_id: int) -> bytes:
    export = db.session.get_one(ExportFile, export_id)
    return b"".join(get_storage().read_chunks(export.storage_key))


def requested_by_hand(ward: Ward, person) -> bytes:
    """The file the person gets asking for the schedule's query themselves, in the schedule's format."""
    access = current_context(ward.workspace.id, person.id)
    export = queued_query_file(
        access,
        ward.query,
        ward.query.definition(),
        QueryFileOptions(format="csv", heading="names"),
        source_name="By hand",
        source_version=ward.query.version,
        requested_at=database_clock(),
    )
    db.session.add(export)
    db.session.commit()
    assert run_export_file(export.id) == "succeeded"
    return stored(export.id)


def rows_by_person(run_id: int) -> dict[int, RecipientDelivery]:
    db.session.rollback()
    return {
        row.person_id: row
        for row in db.session.scalars(select(RecipientDelivery).where(RecipientDelivery.run_id == run_id))
    }


@pytest.fixture
def ward(app_context) -> Ward:
    return Ward()


def test_three_recipients_with_two_row_scopes_get_two_files_each_as_they_would_ask_for_it(
    ward, mail_to_smtp_server, smtp_server
):
    north_one, north_two, south = ward.manager(ward.north), ward.manager(ward.north), ward.manager(ward.south)
    run = admitted(ward.schedule([north_one, north_two, south]))

    assert process_run(run.id) == "succeeded"

    files = db.session.scalars(select(ScheduleRunFile).where(ScheduleRunFile.run_id == run.id)).all()
    assert sorted(f.row_count for f in files) == [2, 3]
    rows = rows_by_person(run.id)
    assert {row.status for row in rows.values()} == {"submitted"}
    assert rows[north_one.id].export_id == rows[north_two.id].export_id != rows[south.id].export_id
    assert stored(rows[north_one.id].export_id) == requested_by_hand(ward, north_one)
    assert stored(rows[south.id].export_id) == requested_by_hand(ward, south)
    assert b"South shift" not in stored(rows[north_one.id].export_id)
    assert len(smtp_server.messages) == 3


def test_a_recipient_who_lost_access_is_skipped_and_the_others_get_theirs(ward, mail_to_smtp_server, smtp_server):
    north = ward.manager(ward.north)
    without = ward.manager(ward.south, dataset_grants=["teams"])
    run = admitted(ward.schedule([without, north]))

    assert process_run(run.id) == "succeeded"

    rows = rows_by_person(run.id)
    assert (rows[without.id].status, rows[without.id].skip_reason) == ("skipped", "recipient_access_lost")
    assert rows[north.id].status == "submitted"
    assert [m.recipients[0] for m in smtp_server.messages] == [north.email]


def test_each_link_opens_only_its_recipients_file(ward, client, mail_to_smtp_server, smtp_server):
    north, south = ward.manager(ward.north), ward.manager(ward.south)
    run = admitted(ward.schedule([north, south]))
    assert process_run(run.id) == "succeeded"

    for person_id, row in rows_by_person(run.id).items():
        response = client.get(f"/d/{link_token(row.link_nonce, 'download')}")
        assert response.status_code == 200, person_id
        assert response.data == stored(row.export_id)


def test_the_runs_page_lists_the_files_and_whom_each_went_to(ward, client, auth, mail_to_smtp_server, smtp_server):
    north, south = ward.manager(ward.north), ward.manager(ward.south)
    schedule = ward.schedule([north, south])
    run = admitted(schedule)
    assert process_run(run.id) == "succeeded"
    rows = rows_by_person(run.id)

    auth.login(ward.owner.email)
    page = client.get(f"/w/{ward.workspace.id}/schedules/{schedule.id}").get_data(as_text=True)

    files = page.split(f'id="run-{run.id}-files"', 1)[1].split("</table>", 1)[0]
    for person in (north, south):
        line = files.split(f"File {rows[person.id].export_id}<", 1)[1].split("</tr>", 1)[0]
        assert person.name in line and "Sent" in line


def test_the_send_condition_applies_to_each_file(ward, mail_to_smtp_server, smtp_server):
    north, east = ward.manager(ward.north), ward.manager(ward.east)
    run = admitted(ward.schedule([north, east], send_condition="has_rows"))

    assert process_run(run.id) == "succeeded"

    decisions = {
        f.row_count: (f.decision, f.skip_reason)
        for f in db.session.scalars(select(ScheduleRunFile).where(ScheduleRunFile.run_id == run.id))
    }
    assert decisions == {3: ("send", None), 0: ("skip", "no rows")}
    assert east.id not in rows_by_person(run.id)
    assert [m.recipients[0] for m in smtp_server.messages] == [north.email]


def test_a_run_every_file_of_which_is_held_back_is_skipped(ward, mail_to_smtp_server, smtp_server):
    east = ward.manager(ward.east)
    run = admitted(ward.schedule([east], send_condition="has_rows"))

    assert process_run(run.id) == "skipped"

    db.session.rollback()
    assert db.session.get_one(ScheduleRun, run.id).skip_reason == "no recipient's file was sent (no rows)"


def test_a_run_delivered_again_makes_no_file_twice_for_one_access(ward, mail_to_smtp_server, smtp_server):
    north = ward.manager(ward.north)
    run = admitted(ward.schedule([north]))
    assert process_run(run.id) == "succeeded"
    db.session.rollback()
    db.session.execute(
        ScheduleRun.__table__.update().where(ScheduleRun.id == run.id).values(status="running", lease_expires_at=None)
    )
    db.session.commit()

    assert process_run(run.id) == "succeeded"

    assert len(db.session.scalars(select(ScheduleRunFile).where(ScheduleRunFile.run_id == run.id)).all()) == 1
    assert len(smtp_server.messages) == 1


def test_a_schedule_with_an_outside_address_cannot_run_as_each_recipient(ward):
    schedule = factories.make_schedule(ward.query, ward.owner)
    data = input_of(schedule)
    data.addresses = "payroll@contoso.example"
    data.run_as_recipients = True

    with pytest.raises(ValidationError) as refused:
        save_schedule(current_context(ward.workspace.id, ward.owner.id), schedule, data)

    assert refused.value.field == "run_as_recipients"
    assert "outside address" in str(refused.value) and "payroll@contoso.example" in str(refused.value)
    db.session.rollback()
    assert db.session.get_one(Schedule, schedule.id, populate_existing=True).run_as_recipients is False
