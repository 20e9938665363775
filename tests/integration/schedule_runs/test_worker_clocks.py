"""Leases on the database's clock: a worker whose own clock is wrong neither loses the work it is
doing nor holds on to work it stopped doing.

Each test runs, as separate machines would, one rq worker with its wall clock shifted
(tests/fixtures/clock_shift) beside a worker and a scheduler (`flask scheduler`, the periodic loop
that redelivers lapsed leases) on the true clock, all on PostgreSQL and Redis, with mail to a real
SMTP server.
"""

from __future__ import annotations

import time

import pytest

from app.extensions import db
from app.models.schedule import ScheduleRun
from app.models.types import database_clock
from app.services.schedules.run_work import RUNS
from app.services.work.claims import dispatch_pending
from app.services.work.work_kind import LOST_AFTER
from tests.fixtures.workers import (
    a_query_waits_for_the_timesheet_lock,
    file_row,
    timesheet_locked,
    wait_for,
    worker_name,
)

# Short, so that a lease written on a wrong clock lapses (or outlives its holder) many times over
# within one test; the skew is far larger than the lease either way.
LEASE = "4"
# What the scheduler writes when it takes work over from a holder it judges dead.
TAKEOVER = "stopped renewing its lease"

pytestmark = pytest.mark.environment(LEASE_SECONDS=LEASE)


def scheduler_running(start_scheduler, **overrides: str):
    """A scheduler whose periodic turns have begun, so it judges every lease from the first moment."""
    scheduler = start_scheduler(**overrides)
    wait_for(lambda: "scheduler started" in scheduler.output(), timeout=60, what="the scheduler to start")
    return scheduler


def run_row(run_id: int) -> ScheduleRun:
    db.session.rollback()
    return db.session.get_one(ScheduleRun, run_id, populate_existing=True)


def test_a_worker_whose_clock_runs_behind_keeps_its_run_and_mails_each_recipient_once(
    run_scenario, smtp_server, start_worker, start_scheduler
):
    mail_url = f"smtp://{smtp_server.host}:{smtp_server.port}"
    # Three slow messages: the run outlasts the engine's grace for a fresh dispatch and three leases.
    smtp_server.answer_slowly((LOST_AFTER.total_seconds() + 3 * int(LEASE)) / 3)
    scheduler = scheduler_running(start_scheduler, MAIL_URL=mail_url)
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner", "someone@example.org"))
    # The scheduler, already turning, dispatches the run.
    run = run_scenario.admit(schedule)

    behind = start_worker(clock_shift=-40, MAIL_URL=mail_url)
    wait_for(lambda: run_row(run.id).lease_holder == worker_name(behind), timeout=60, what="the run to start")
    start_worker(MAIL_URL=mail_url)

    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=90, what="the run to succeed")
    settled = run_row(run.id)
    assert [(a.number, a.outcome) for a in settled.attempts] == [(1, "succeeded")]
    received = sorted(address for m in smtp_server.messages for address in m.recipients)
    assert received == sorted([run_scenario.colleague.email, run_scenario.owner.email, "someone@example.org"])
    assert TAKEOVER not in scheduler.output()


def test_a_file_held_up_by_a_lock_wait_on_a_worker_whose_clock_runs_behind_is_made_once(
    export_scenario, isolated_storage, start_worker, start_scheduler
):
    scheduler = scheduler_running(start_scheduler)
    export = export_scenario.request_file(dispatch_now=True)
    with timesheet_locked():
        behind = start_worker(clock_shift=-40)
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the file's query to wait for the lock")
        start_worker()
        # Past the engine's grace for a fresh dispatch and three leases, alive and renewing, on the wrong clock.
        time.sleep(LOST_AFTER.total_seconds() + 3 * int(LEASE))

    wait_for(lambda: file_row(export.id).is_settled, timeout=60, what="the file to settle")
    done = file_row(export.id)
    assert (done.status, done.attempt_count, done.lease_holder) == ("succeeded", 1, worker_name(behind))
    assert TAKEOVER not in scheduler.output()


def test_a_killed_worker_whose_clock_runs_ahead_loses_its_run_within_a_minute(
    run_scenario, smtp_server, start_worker, start_scheduler
):
    mail_url = f"smtp://{smtp_server.host}:{smtp_server.port}"
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    assert dispatch_pending(RUNS) == 1
    with timesheet_locked():
        ahead = start_worker(clock_shift=300, MAIL_URL=mail_url)
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the run's query to wait for the lock")
        started = run_row(run.id)
        assert started.started_at <= database_clock(), "a start is never shown in the future"
        ahead.kill()
        killed_at = time.monotonic()
    start_worker(MAIL_URL=mail_url)
    start_scheduler(MAIL_URL=mail_url)

    wait_for(lambda: run_row(run.id).attempt_count == 2, timeout=60, what="the run to be redelivered")
    assert time.monotonic() - killed_at < 60
    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=60, what="the run to succeed")
    settled = run_row(run.id)
    assert [(a.outcome, a.error_code) for a in settled.attempts] == [("failed", "worker_stopped"), ("succeeded", None)]
    assert all(a.started_at <= settled.completed_at for a in settled.attempts)
    assert [m.recipients for m in smtp_server.messages] == [[run_scenario.colleague.email]]
