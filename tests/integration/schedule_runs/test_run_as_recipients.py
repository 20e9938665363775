"""Run as each recipient: every person's file is made with their own access at run time, people
whose access makes the same file share it, one who lost access is skipped and the others still get
theirs, each link opens only its person's file, and the send condition applies to each file.
With destinations, they get the owner's file, made and decided as an ordinary run's, never a person's.
Run in this process against PostgreSQL, mailing the real aiosmtpd server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select, update

from app.domain.errors import ValidationError
from app.domain.people.access import current_context
from app.extensions import db
from app.models import ExportDestination, ExportFile, Membership
from app.models.schedule import (
    RecipientDelivery,
    RunTrigger,
    Schedule,
    ScheduleDestination,
    ScheduleRecipient,
    ScheduleRun,
    ScheduleRunFile,
)
from app.models.schedule_destination_delivery import DestinationDelivery
from app.models.types import database_clock
from app.services.files.export_runner import run_export_file
from app.services.files.file_requests import QueryFileOptions, queued_query_file
from app.services.pages.public_link_tokens import link_token
from app.services.schedules.destination_deliveries import run_delivery
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


def admitted(schedule: Schedule, occurrence_at: datetime = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)) -> ScheduleRun:
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=schedule.workspace_id,
        occurrence_at=occurrence_at,
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


# With destinations: they get the owner's file, made and decided as an ordinary run's; people still
# get only their own.


def with_folder(ward: Ward, schedule: Schedule) -> ExportDestination:
    folder = factories.make_destination(ward.workspace, name="Ward folder", path="wards")
    db.session.add(ScheduleDestination(schedule_id=schedule.id, destination_id=folder.id, position=0))
    db.session.commit()
    return folder


def with_folder_admitted(ward: Ward, recipients, **values) -> tuple[Schedule, ScheduleRun]:
    """A schedule run as each recipient that also delivers to a folder, and a run of it admitted."""
    schedule = ward.schedule(recipients, **values)
    with_folder(ward, schedule)
    return schedule, admitted(schedule)


def owner_sees_only(ward: Ward, *teams) -> None:
    """The owner a member whose row scope is `teams` (an administrator sees every team's rows)."""
    db.session.execute(
        update(Membership)
        .where(Membership.workspace_id == ward.workspace.id, Membership.person_id == ward.owner.id)
        .values(role="member", team_scope=[team.id for team in teams])
    )
    db.session.commit()


def settled(run_id: int) -> ScheduleRun:
    db.session.rollback()
    return db.session.get_one(ScheduleRun, run_id, populate_existing=True)


def destination_deliveries_of(run_id: int) -> list[DestinationDelivery]:
    db.session.rollback()
    return list(db.session.scalars(select(DestinationDelivery).where(DestinationDelivery.run_id == run_id)))


def copied(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_with_a_destination_people_get_their_own_files_and_the_destination_the_owner_s_rows(
    ward, destinations_root, mail_to_smtp_server, smtp_server
):
    north, south = ward.manager(ward.north), ward.manager(ward.south)
    schedule, run = with_folder_admitted(ward, [north, south])

    assert process_run(run.id) == "succeeded"
    [delivery] = destination_deliveries_of(run.id)
    assert run_delivery(delivery.id) == "delivered"

    owners_file = settled(run.id).export_id
    rows = rows_by_person(run.id)
    assert owners_file not in {rows[north.id].export_id, rows[south.id].export_id}
    assert stored(rows[north.id].export_id) == requested_by_hand(ward, north)
    assert stored(rows[south.id].export_id) == requested_by_hand(ward, south)
    assert stored(owners_file) == requested_by_hand(ward, ward.owner)
    assert copied(destinations_root) == {f"wards/{delivery.target_key}": stored(owners_file)}
    assert sorted(m.recipients[0] for m in smtp_server.messages) == sorted([north.email, south.email])


def test_the_send_condition_holding_back_the_owner_s_file_skips_the_destinations_while_people_get_theirs(
    ward, destinations_root, mail_to_smtp_server, smtp_server
):
    owner_sees_only(ward, ward.east)
    north = ward.manager(ward.north)
    schedule, run = with_folder_admitted(ward, [north], send_condition="has_rows")

    assert process_run(run.id) == "succeeded"

    after = settled(run.id)
    assert (after.status, after.decision, after.skip_reason) == ("succeeded", "skip", "no rows")
    assert destination_deliveries_of(run.id) == []
    assert rows_by_person(run.id)[north.id].status == "submitted"
    assert [m.recipients[0] for m in smtp_server.messages] == [north.email]


def test_a_run_whose_people_s_files_were_held_back_succeeds_when_the_destinations_get_the_owner_s(
    ward, destinations_root, mail_to_smtp_server, smtp_server
):
    east = ward.manager(ward.east)
    schedule, run = with_folder_admitted(ward, [east], send_condition="has_rows")

    assert process_run(run.id) == "succeeded"

    after = settled(run.id)
    assert (after.status, after.decision, after.skip_reason, after.row_count) == ("succeeded", "send", None, 5)
    assert [f.decision for f in after.files] == ["skip"]
    assert [d.status for d in destination_deliveries_of(run.id)] == ["pending"]
    assert smtp_server.messages == []


def test_a_run_that_held_back_the_people_s_files_and_the_owner_s_is_skipped_saying_why_for_both(
    ward, destinations_root, mail_to_smtp_server, smtp_server
):
    owner_sees_only(ward, ward.east)
    east = ward.manager(ward.east)
    schedule, run = with_folder_admitted(ward, [east], send_condition="has_rows")

    assert process_run(run.id) == "skipped"

    assert settled(run.id).skip_reason == (
        "no recipient's file was sent (no rows); the owner's file was not sent to the destinations (no rows)"
    )
    assert destination_deliveries_of(run.id) == []
    assert smtp_server.messages == []


def test_only_when_changed_the_owner_s_file_is_compared_with_the_last_one_the_destinations_got(
    ward, destinations_root, mail_to_smtp_server, smtp_server
):
    north = ward.manager(ward.north)
    schedule, first = with_folder_admitted(ward, [north], send_condition="changed")
    assert process_run(first.id) == "succeeded"
    # A South row changes the owner's file, not the North manager's.
    factories.make_timesheet_entry(factories.make_team_member(ward.south), note="South shift")

    second = admitted(schedule, datetime(2026, 12, 2, 6, 0, tzinfo=UTC))
    assert process_run(second.id) == "succeeded"

    after = settled(second.id)
    assert (after.decision, [(f.decision, f.skip_reason) for f in after.files]) == (
        "send",
        [("skip", "unchanged since run 1")],
    )
    assert len(destination_deliveries_of(second.id)) == 1
    assert len(smtp_server.messages) == 1


def test_a_recipient_skipped_for_lost_access_has_no_link_to_the_owner_s_file(
    ward, client, destinations_root, mail_to_smtp_server, smtp_server
):
    north = ward.manager(ward.north)
    without = ward.manager(ward.south, dataset_grants=["teams"])
    schedule, run = with_folder_admitted(ward, [without, north])
    assert process_run(run.id) == "succeeded"
    rows = rows_by_person(run.id)

    skipped = client.get(f"/d/{link_token(rows[without.id].link_nonce, 'download')}")
    sent = client.get(f"/d/{link_token(rows[north.id].link_nonce, 'download')}")

    assert rows[without.id].skip_reason == "recipient_access_lost"
    assert skipped.status_code == 404
    assert sent.data == stored(rows[north.id].export_id) != stored(settled(run.id).export_id)


def test_the_runs_page_shows_the_owner_s_file_went_to_the_destinations_beside_the_people_s_files(
    ward, client, auth, destinations_root, mail_to_smtp_server, smtp_server
):
    north = ward.manager(ward.north)
    schedule, run = with_folder_admitted(ward, [north])
    assert process_run(run.id) == "succeeded"
    owners_file, north_file = settled(run.id).export_id, rows_by_person(run.id)[north.id].export_id

    auth.login(ward.owner.email)
    page = client.get(f"/w/{ward.workspace.id}/schedules/{schedule.id}").get_data(as_text=True)

    files = page.split(f'id="run-{run.id}-files"', 1)[1].split("</table>", 1)[0]
    assert "and the owner's for the destinations" in files
    owners = files.split(f'id="run-{run.id}-owners-file"', 1)[1].split("</tr>", 1)[0]
    assert f"File {owners_file}<" in owners and "(the owner's)" in owners
    assert "<td>5</td>" in owners and "Sent" in owners and "Ward folder" in owners
    north_line = files.split(f"File {north_file}<", 1)[1].split("</tr>", 1)[0]
    assert north.name in north_line and "Ward folder" not in north_line


def test_the_runs_page_says_why_the_owner_s_file_was_not_sent_to_the_destinations(
    ward, client, auth, destinations_root, mail_to_smtp_server, smtp_server
):
    owner_sees_only(ward, ward.east)
    north = ward.manager(ward.north)
    schedule, run = with_folder_admitted(ward, [north], send_condition="has_rows")
    assert process_run(run.id) == "succeeded"

    auth.login(ward.owner.email)
    page = client.get(f"/w/{ward.workspace.id}/schedules/{schedule.id}").get_data(as_text=True)

    card = page.split(f'id="run-{run.id}"', 1)[1].split("</article>", 1)[0]
    owners = card.split(f'id="run-{run.id}-owners-file"', 1)[1].split("</tr>", 1)[0]
    assert "Not sent: no rows" in owners and "No destination" in owners
    assert "nobody was sent anything" not in card


def test_a_run_with_a_destination_delivered_again_makes_the_owner_s_file_and_its_copy_once(
    ward, destinations_root, mail_to_smtp_server, smtp_server
):
    north = ward.manager(ward.north)
    schedule, run = with_folder_admitted(ward, [north])
    assert process_run(run.id) == "succeeded"
    db.session.execute(
        ScheduleRun.__table__.update().where(ScheduleRun.id == run.id).values(status="running", lease_expires_at=None)
    )
    db.session.commit()

    assert process_run(run.id) == "succeeded"

    made = db.session.scalars(select(ExportFile.id).where(ExportFile.schedule_id == schedule.id)).all()
    assert len(made) == 2
    assert len(destination_deliveries_of(run.id)) == 1
    assert len(smtp_server.messages) == 1
