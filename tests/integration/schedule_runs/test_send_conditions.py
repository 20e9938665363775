"""When a run sends: each send condition, run in this process against PostgreSQL and mailing the
real aiosmtpd server. A run that sends nothing is skipped with its reason in words, makes no
delivery row and is no failure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update

from app.domain.schedules.send_conditions import NO_ROWS_ALERT, NO_ROWS_ALERT_WITH_FILE
from app.extensions import db
from app.models import ExportFile, TeamMember, TimesheetEntry
from app.models.schedule import RecipientDelivery, RunTrigger, Schedule, ScheduleRun
from app.services.schedules.schedule_admission import admit_run
from app.services.schedules.schedule_runs import process_run
from tests import factories

FIRST_OCCURRENCE = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)


def nothing(run_scenario) -> dict:
    """The scenario's query narrowed to no rows."""
    return {**run_scenario.query.definition(), "filters": [{"column": "note", "op": "eq", "value": "no such"}]}


def admitted(schedule: Schedule, hours_later: int = 0) -> ScheduleRun:
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=schedule.workspace_id,
        occurrence_at=FIRST_OCCURRENCE + timedelta(hours=hours_later),
        trigger=RunTrigger.TIMETABLE,
    )
    assert run is not None
    return run


def settled(run_id: int) -> ScheduleRun:
    db.session.rollback()
    return db.session.get_one(ScheduleRun, run_id, populate_existing=True)


def delivery_rows(run_id: int) -> int:
    db.session.rollback()
    return db.session.scalar(select(func.count()).where(RecipientDelivery.run_id == run_id)) or 0


def test_always_sends_a_file_with_no_rows(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(query_definition=nothing(run_scenario), send_condition="always")
    run = admitted(schedule)

    assert process_run(run.id) == "succeeded"

    assert (settled(run.id).status, settled(run.id).row_count) == ("succeeded", 0)
    assert len(smtp_server.messages) == 1 and "/d/" in smtp_server.messages[0].part("text/plain")


def test_only_with_rows_skips_a_run_whose_file_has_none_and_makes_no_delivery_row(
    run_scenario, mail_to_smtp_server, smtp_server
):
    schedule = run_scenario.make_schedule(
        recipients=("colleague", "outside@example.org"),
        query_definition=nothing(run_scenario),
        send_condition="has_rows",
    )
    run = admitted(schedule)

    assert process_run(run.id) == "skipped"

    skipped = settled(run.id)
    assert (skipped.status, skipped.skip_reason, skipped.decision, skipped.row_count) == (
        "skipped",
        "no rows",
        "skip",
        0,
    )
    assert skipped.completed_at is not None and skipped.attempts[-1].outcome == "succeeded"
    assert db.session.get_one(ExportFile, skipped.export_id).status == "succeeded"
    assert delivery_rows(run.id) == 0
    assert smtp_server.messages == []


def test_only_with_rows_sends_a_file_that_has_rows(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(send_condition="has_rows")
    run = admitted(schedule)

    assert process_run(run.id) == "succeeded"

    assert (settled(run.id).decision, settled(run.id).row_count) == ("send", 5)
    assert len(smtp_server.messages) == 1


def test_only_without_rows_sends_an_alert_that_says_so_without_the_file(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(query_definition=nothing(run_scenario), send_condition="no_rows")
    run = admitted(schedule)

    assert process_run(run.id) == "succeeded"

    [arrived] = smtp_server.messages
    text = arrived.part("text/plain")
    assert NO_ROWS_ALERT in text
    assert "/d/" not in text and "Download the file" not in text
    assert "/u/" in text
    assert not [part for part in arrived.message.walk() if part.get_content_disposition() == "attachment"]


def test_an_alert_links_the_empty_file_when_the_schedule_asks(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(
        query_definition=nothing(run_scenario), send_condition="no_rows", alert_with_file=True
    )
    run = admitted(schedule)

    assert process_run(run.id) == "succeeded"

    [arrived] = smtp_server.messages
    text = arrived.part("text/plain")
    assert NO_ROWS_ALERT_WITH_FILE in text and "/d/" in text


def test_only_without_rows_skips_a_run_whose_file_has_rows(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(send_condition="no_rows")
    run = admitted(schedule)

    assert process_run(run.id) == "skipped"

    assert settled(run.id).skip_reason == "5 rows; it sends only when there are none"
    assert delivery_rows(run.id) == 0 and smtp_server.messages == []


def test_only_when_changed_sends_the_first_run_skips_the_same_rows_and_sends_changed_ones(
    run_scenario, mail_to_smtp_server, smtp_server
):
    schedule = run_scenario.make_schedule(send_condition="changed")
    first, second = admitted(schedule), admitted(schedule, 1)

    assert process_run(first.id) == "succeeded"
    assert process_run(second.id) == "skipped"
    assert settled(second.id).skip_reason == "unchanged since run 1"
    assert settled(second.id).rows_digest == settled(first.id).rows_digest is not None

    employee = db.session.scalars(select(TeamMember)).first()
    factories.make_timesheet_entry(employee, note="one more", project="one more")
    third = admitted(schedule, 2)
    assert process_run(third.id) == "succeeded"
    fourth = admitted(schedule, 3)
    assert process_run(fourth.id) == "skipped"

    assert settled(fourth.id).skip_reason == "unchanged since run 3"
    assert len(smtp_server.messages) == 2


def test_only_when_changed_sees_a_changed_value_in_a_row_it_sent(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(send_condition="changed")
    first = admitted(schedule)
    assert process_run(first.id) == "succeeded"

    entry = db.session.scalars(select(TimesheetEntry).order_by(TimesheetEntry.id)).first()
    db.session.execute(update(TimesheetEntry).where(TimesheetEntry.id == entry.id).values(note="edited"))
    db.session.commit()
    second = admitted(schedule, 1)

    assert process_run(second.id) == "succeeded"
    assert len(smtp_server.messages) == 2


def test_a_skipped_run_is_no_failure_and_ends_a_failure_streak(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(
        query_definition=nothing(run_scenario), send_condition="has_rows", failure_streak=2
    )
    run = admitted(schedule)

    assert process_run(run.id) == "skipped"

    db.session.rollback()
    after = db.session.get_one(Schedule, schedule.id, populate_existing=True)
    assert (after.status, after.failure_streak) == ("active", 0)


def test_a_run_that_decided_to_send_keeps_sending_when_delivered_again(run_scenario, mail_to_smtp_server, smtp_server):
    """Its earlier attempt committed "send" and stopped: the rows are the last sent run's, yet the
    decision stands, so recipients are not left half-served."""
    schedule = run_scenario.make_schedule(send_condition="changed")
    first, second = admitted(schedule), admitted(schedule, 1)
    assert process_run(first.id) == "succeeded"
    db.session.execute(update(ScheduleRun).where(ScheduleRun.id == second.id).values(decision="send"))
    db.session.commit()

    assert process_run(second.id) == "succeeded"

    assert len(smtp_server.messages) == 2


def test_a_run_that_decided_to_skip_settles_skipped_by_that_decision_when_delivered_again(
    run_scenario, mail_to_smtp_server, smtp_server
):
    """Its earlier attempt committed "skip" and stopped before settling: the file has rows, which
    "only when it has rows" would send, yet the decision stands and nobody is mailed."""
    schedule = run_scenario.make_schedule(send_condition="has_rows")
    run = admitted(schedule)
    db.session.execute(
        update(ScheduleRun).where(ScheduleRun.id == run.id).values(decision="skip", skip_reason="no rows")
    )
    db.session.commit()

    assert process_run(run.id) == "skipped"

    assert (settled(run.id).status, settled(run.id).skip_reason) == ("skipped", "no rows")
    assert delivery_rows(run.id) == 0
    assert smtp_server.messages == []


def test_the_run_history_shows_why_a_run_sent_nothing(run_scenario, mail_to_smtp_server, smtp_server, client, auth):
    schedule = run_scenario.make_schedule(query_definition=nothing(run_scenario), send_condition="has_rows")
    run = admitted(schedule)
    assert process_run(run.id) == "skipped"

    auth.login(run_scenario.owner.email)
    page = client.get(f"/w/{run_scenario.workspace.id}/schedules/{schedule.id}").get_data(as_text=True)

    assert '<span class="status status-skipped">skipped</span>' in page
    assert "no rows" in page.split(f'id="run-{run.id}-skipped"', 1)[1].split("</dd>", 1)[0]
