"""Schedule runs on real rq worker processes: a run admitted like "Run now" is dispatched and
processed; a worker SIGKILLed mid-run is replaced, the run completes, and each recipient receives
exactly one message.

To hold the worker inside the run, the test takes an exclusive lock on the timesheet table: the
file's query waits for it, alive, until the worker is killed.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from app.extensions import db
from app.models.schedule import Schedule, ScheduleRun
from app.models.types import utcnow
from app.services.leases import lease_seconds
from app.services.outbox import LOST_AFTER
from app.services.schedule_runs import MAX_STALLS, dispatch_queued, redeliver_stalled
from tests.fixtures.workers import a_query_waits_for_the_timesheet_lock, timesheet_locked, wait_for


def run_row(run_id: int) -> ScheduleRun:
    db.session.rollback()
    return db.session.get(ScheduleRun, run_id, populate_existing=True)


def test_run_admitted_by_hand_is_dispatched_and_processed_by_a_worker(run_scenario, smtp_server, start_worker):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)

    assert dispatch_queued() == 1
    start_worker(MAIL_URL=f"smtp://{smtp_server.host}:{smtp_server.port}")

    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=60, what="the run to succeed")
    assert [m.recipients for m in smtp_server.messages] == [[run_scenario.colleague.email]]


def test_run_whose_worker_was_killed_completes_and_each_recipient_gets_one_message(
    run_scenario, smtp_server, start_worker
):
    mail_url = f"smtp://{smtp_server.host}:{smtp_server.port}"
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner", "someone@example.org"))
    run = run_scenario.admit(schedule)
    assert dispatch_queued() == 1
    with timesheet_locked():
        first = start_worker(MAIL_URL=mail_url)
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the worker to wait inside the run's query")
        first.kill()
    start_worker(MAIL_URL=mail_url)

    # The watchdog's judgement once the killed holder's lease has lapsed.
    assert redeliver_stalled(utcnow() + LOST_AFTER + timedelta(seconds=lease_seconds() + 1)) == 1

    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=60, what="the run to succeed after the kill")
    settled = run_row(run.id)
    assert [(a.outcome, a.error_code) for a in settled.attempts] == [("failed", "worker_stopped"), ("succeeded", None)]
    received = sorted(address for m in smtp_server.messages for address in m.recipients)
    assert received == sorted([run_scenario.colleague.email, run_scenario.owner.email, "someone@example.org"])


def test_run_stalled_too_many_times_is_failed_with_timeout(run_scenario):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    long_ago = utcnow() - timedelta(hours=1)
    db.session.execute(
        update(ScheduleRun)
        .where(ScheduleRun.id == run.id)
        .values(
            status="running",
            attempt_count=MAX_STALLS,
            dispatched_at=long_ago,
            lease_expires_at=long_ago,
            job_id="schedule-run-gone",
        )
    )
    db.session.commit()

    assert redeliver_stalled() == 1

    failed = run_row(run.id)
    assert (failed.status, failed.failure_code) == ("failed", "timeout")
    db.session.rollback()
    assert db.session.get(Schedule, schedule.id, populate_existing=True).failure_streak == 1
