"""The work engine once, with real worker processes (issue 16, "Tests"), for every kind of
background record in WORK_KINDS: a worker SIGKILLed mid-step, a worker frozen past its lease and
thawed, a slow live worker, and Redis flushed under queued and running work.

Each kind's driver (drivers.py) makes a record ready, names the lock that stops its job inside a
step (tests/fixtures/workers.py `hold_lock`) and says what one completion leaves in storage, at
destinations and at the SMTP server. The workers are real `python -m jobs.worker` processes with
short leases (pool.py); the scheduler's turns are the engine's own entry points, run here at the
real clock so that the test decides when one happens.

A dispatch younger than LOST_AFTER is never judged (its job may still be on its way into Redis).
Rather than wait that long in every case, each test moves every recorded dispatch LOST_AFTER into
the past once its job is inside the step: from then on the engine judges the record by its lease
alone, as it does any record dispatched long ago.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest
from flask import current_app
from redis import Redis
from rq.job import Job, JobStatus
from sqlalchemy import inspect, text

from app.extensions import db
from app.models.types import utcnow
from app.services.work import engine
from app.services.work.kinds import WORK_KINDS
from app.services.work.queue import redis_connection
from app.services.work.work_kind import LOST_AFTER
from jobs.periodic import PERIODIC_TASKS
from tests.fixtures.workers import BackgroundProcess, HeldLock, wait_for
from tests.integration.work.drivers import DRIVERS, Driver
from tests.integration.work.pool import LEASE_SECONDS, POOL_SIZE

T = TypeVar("T")
KIND_NAMES = [kind.name for kind in WORK_KINDS]
# How often the scheduler runs the engine's turn over lapsed leases (jobs/periodic.py).
WATCHDOG_TURN_SECONDS = next(task.every_seconds for task in PERIODIC_TASKS if task.run is engine.redeliver_lapsed)
# What a killed or frozen holder's record waits for before another attempt takes it over.
HANDOVER_SECONDS = LEASE_SECONDS + WATCHDOG_TURN_SECONDS
# How long a live worker is held inside one step.
SLOW_STEP_LEASES = 3
SETTLE_SECONDS = 90


def test_every_kind_of_work_has_a_driver():
    assert set(DRIVERS) == set(KIND_NAMES)


def engine_turns() -> int:
    """One turn of each of the engine's periodic concerns, as the scheduler runs them; how many
    records they handled."""
    now = utcnow()
    return engine.dispatch_pending(now) + engine.redispatch_lost(now) + engine.redeliver_lapsed(now)


def turning_until(predicate: Callable[[], T], what: str, timeout: float = SETTLE_SECONDS) -> T:
    """Run the engine's turns until `predicate()` holds."""

    def turned() -> T:
        engine_turns()
        return predicate()

    return wait_for(turned, timeout=timeout, interval=0.25, what=what)


def every_dispatch_is_older_by(seconds: float) -> None:
    """Move every dispatch recorded on any table this far into the past."""
    for table in db.metadata.sorted_tables:
        if "dispatched_at" in table.c:
            db.session.execute(
                text(
                    f"UPDATE {table.name} SET dispatched_at = dispatched_at - make_interval(secs => :seconds)"
                    " WHERE dispatched_at IS NOT NULL"
                ),
                {"seconds": seconds},
            )
    db.session.commit()


def dispatched_and_held(driver: Driver, hold_lock, count: int = 1, held: int = 1) -> tuple[list[int], HeldLock]:
    """`count` records of the kind dispatched by the engine, `held` of them taken by workers that
    now wait inside a step for the driver's lock; every dispatch then as old as LOST_AFTER."""
    record_ids = [driver.make_ready() for _ in range(count)]
    lock = hold_lock(driver.hold)
    assert engine.dispatch_pending(utcnow()) == count
    wait_for(lambda: lock.waiters() == held, timeout=SETTLE_SECONDS, what=f"{held} worker(s) inside a step")
    every_dispatch_is_older_by(LOST_AFTER.total_seconds())
    return record_ids, lock


def columns(record) -> dict[str, object]:
    """The record's column values, to compare it with itself later."""
    return {attribute.key: attribute.value for attribute in inspect(record).attrs}


def job_ended(job_id: str) -> bool:
    status = Job.fetch(job_id, connection=redis_connection()).get_status(refresh=True)
    return status in (JobStatus.FINISHED, JobStatus.FAILED)


def a_write_is_uncommitted() -> bool:
    """Another session of this database changed rows and has not committed, while not waiting for a lock."""
    sessions = db.session.scalar(
        text(
            "SELECT count(DISTINCT activity.pid) FROM pg_stat_activity AS activity"
            " JOIN pg_locks AS locks ON locks.pid = activity.pid"
            " WHERE activity.datname = current_database() AND activity.pid <> pg_backend_pid()"
            " AND activity.state <> 'idle' AND activity.wait_event_type IS DISTINCT FROM 'Lock'"
            " AND locks.mode = 'RowExclusiveLock' AND locks.granted"
        )
    )
    db.session.rollback()
    return sessions > 0


def freeze_between_transactions(worker: BackgroundProcess) -> None:
    """SIGSTOP the worker; again if it stopped inside a transaction that changed rows (a lease
    renewal's), whose row locks would hold up the next attempt for as long as it stays frozen."""
    for _ in range(20):
        worker.freeze()
        if not a_write_is_uncommitted():
            return
        worker.thaw()
        wait_for(lambda: not a_write_is_uncommitted(), timeout=10, what="the worker's transaction to commit")
    raise AssertionError("the worker was always inside a transaction when frozen")


@pytest.mark.parametrize("kind_name", KIND_NAMES)
def test_a_record_whose_worker_is_killed_mid_step_is_redelivered_within_a_lease_and_a_turn_and_completes(
    kind_name, workers, outside, hold_lock
):
    driver = DRIVERS[kind_name]
    [record_id], lock = dispatched_and_held(driver, hold_lock)
    dead_job = driver.job_id(record_id)
    killed = workers.holder(driver.row(record_id).lease_holder)

    killed.kill()
    killed_at = time.monotonic()
    workers.replace(killed)
    lock.release()

    turning_until(lambda: driver.job_id(record_id) != dead_job, "the dead attempt handed over", HANDOVER_SECONDS)
    assert time.monotonic() - killed_at <= HANDOVER_SECONDS
    driver.after_handover(record_id)
    turning_until(lambda: driver.row(record_id).status == driver.succeeded, "the record to complete")
    completed = driver.row(record_id)
    assert completed.attempt_count == 2
    driver.assert_done_once([record_id], outside)


@pytest.mark.parametrize("kind_name", KIND_NAMES)
def test_a_record_whose_worker_froze_past_its_lease_completes_elsewhere_and_the_thawed_attempt_changes_nothing(
    kind_name, workers, outside, hold_lock
):
    driver = DRIVERS[kind_name]
    [record_id], lock = dispatched_and_held(driver, hold_lock)
    frozen_job = driver.job_id(record_id)
    frozen_holder = driver.row(record_id).lease_holder
    frozen = workers.holder(frozen_holder)
    freeze_between_transactions(frozen)
    lock.release()

    turning_until(lambda: driver.job_id(record_id) != frozen_job, "the frozen attempt handed over", HANDOVER_SECONDS)
    driver.after_handover(record_id)
    turning_until(lambda: driver.row(record_id).status == driver.succeeded, "the record to complete elsewhere")
    completed, left_outside = columns(driver.row(record_id)), outside.fingerprint()
    frozen.thaw()
    turning_until(lambda: job_ended(frozen_job), "the thawed attempt's job to end")

    assert columns(driver.row(record_id)) == completed
    assert outside.fingerprint() == left_outside
    assert completed["attempt_count"] == 2
    assert completed["lease_holder"] != frozen_holder
    driver.assert_done_once([record_id], outside)


@pytest.mark.parametrize("kind_name", KIND_NAMES)
def test_a_live_worker_held_inside_one_step_for_several_leases_is_never_restarted_and_completes_at_its_first_attempt(
    kind_name, workers, outside, hold_lock
):
    driver = DRIVERS[kind_name]
    [record_id], lock = dispatched_and_held(driver, hold_lock)
    taken, job = columns(driver.row(record_id)), driver.job_id(record_id)

    held_until = time.monotonic() + SLOW_STEP_LEASES * LEASE_SECONDS
    while time.monotonic() < held_until:
        assert engine_turns() == 0
        time.sleep(0.5)
    still = driver.row(record_id)
    assert (still.status, still.attempt_count, still.lease_holder) == (taken["status"], 1, taken["lease_holder"])
    assert driver.job_id(record_id) == job
    assert taken["lease_expires_at"] < still.lease_expires_at and utcnow() < still.lease_expires_at  # renewed, live
    lock.release()

    turning_until(lambda: driver.row(record_id).status == driver.succeeded, "the record to complete")
    assert driver.row(record_id).attempt_count == 1
    driver.assert_done_once([record_id], outside)


@pytest.mark.parametrize("kind_name", KIND_NAMES)
def test_records_queued_and_running_when_redis_is_flushed_all_complete_exactly_once(
    kind_name, workers, outside, hold_lock
):
    driver = DRIVERS[kind_name]
    record_ids, lock = dispatched_and_held(driver, hold_lock, count=POOL_SIZE + 1, held=POOL_SIZE)
    [queued] = [record_id for record_id in record_ids if driver.row(record_id).lease_holder is None]
    lost_job = driver.job_id(queued)

    Redis.from_url(current_app.config["SETTINGS"].redis_url).flushdb()

    assert engine.redispatch_lost(utcnow()) == 1
    assert driver.job_id(queued) != lost_job
    lock.release()
    turning_until(
        lambda: all(driver.row(record_id).status == driver.succeeded for record_id in record_ids),
        "every record to complete",
    )
    assert [driver.row(record_id).attempt_count for record_id in record_ids] == [1] * len(record_ids)
    driver.assert_done_once(record_ids, outside)
