"""The ticker: coalescing after downtime, the next occurrence moving on, planning a schedule that
has none, dispatching what it admits, and four ticker processes racing over the same schedules."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rq.job import Job
from sqlalchemy import func, select, text

from app.domain.schedules.schedule_lifecycle import record_occurrences
from app.domain.timing.timetable import Timetable, next_occurrence
from app.extensions import db
from app.models.schedule import Schedule, ScheduleRun
from app.models.types import utcnow
from app.services.schedules.run_work import RUNS
from app.services.schedules.schedule_ticker import tick
from app.services.work import claims, engine
from app.services.work.queue import redis_connection
from app.services.work.work_kind import LOST_AFTER
from tests.fixtures.workers import queues_unreachable, table_lock_waiters, wait_for

PROJECT_ROOT = Path(__file__).resolve().parents[3]
HOURLY = {"kind": "hourly", "minute": 0, "zone": "Europe/Berlin"}


def reloaded(model, row_id):
    db.session.rollback()
    return db.session.get(model, row_id, populate_existing=True)


def runs_of(schedule_id: int) -> list[ScheduleRun]:
    db.session.rollback()
    return list(db.session.scalars(select(ScheduleRun).where(ScheduleRun.schedule_id == schedule_id)))


def test_missed_occurrences_coalesce_into_one_run_that_records_them(run_scenario):
    now = datetime(2026, 11, 30, 10, 20, tzinfo=UTC)
    first_missed = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
    schedule = run_scenario.make_schedule(timetable=HOURLY, next_occurrence_at=first_missed)

    assert tick(now, dispatch=False) == 1

    [run] = runs_of(schedule.id)
    assert run.occurrence_at == datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    assert run.skipped_occurrences == [f"2026-11-30T0{h}:00:00+00:00" for h in (6, 7, 8, 9)]
    moved = reloaded(Schedule, schedule.id)
    assert moved.next_occurrence_at == datetime(2026, 11, 30, 11, 0, tzinfo=UTC)
    assert moved.last_occurrence_at == run.occurrence_at


def test_tick_admits_nothing_for_an_occurrence_already_admitted(run_scenario):
    now = datetime(2026, 11, 30, 10, 20, tzinfo=UTC)
    schedule = run_scenario.make_schedule(timetable=HOURLY, next_occurrence_at=now - timedelta(minutes=20))
    tick(now, dispatch=False)

    assert tick(now + timedelta(minutes=1), dispatch=False) == 0
    assert len(runs_of(schedule.id)) == 1


def test_schedule_without_a_next_occurrence_gets_one_planned_and_no_run(run_scenario):
    now = datetime(2026, 11, 30, 10, 20, tzinfo=UTC)
    schedule = run_scenario.make_schedule(timetable=HOURLY, next_occurrence_at=None)

    tick(now, dispatch=False)

    assert reloaded(Schedule, schedule.id).next_occurrence_at == datetime(2026, 11, 30, 11, 0, tzinfo=UTC)
    assert runs_of(schedule.id) == []


def test_paused_schedule_is_not_ticked(run_scenario):
    now = datetime(2026, 11, 30, 10, 20, tzinfo=UTC)
    schedule = run_scenario.make_schedule(
        timetable=HOURLY, next_occurrence_at=now - timedelta(hours=1), status="paused", pause_reason="user"
    )

    assert tick(now, dispatch=False) == 0
    assert runs_of(schedule.id) == []


def test_admitted_runs_are_dispatched_onto_the_queue(run_scenario):
    due_at = next_occurrence(Timetable.from_json(HOURLY, "UTC"), utcnow() - timedelta(hours=1))
    schedule = run_scenario.make_schedule(timetable=HOURLY, next_occurrence_at=due_at)

    tick()

    [run] = runs_of(schedule.id)
    job = Job.fetch(run.job_id, connection=redis_connection())
    assert (job.func_name, job.args) == ("jobs.schedule_run.run", (run.id,))
    assert run.dispatched_at is not None


def test_a_run_is_admitted_claimed_so_with_redis_down_only_the_lost_job_turn_enqueues_it(
    run_scenario, app, monkeypatch, free_port
):
    due_at = next_occurrence(Timetable.from_json(HOURLY, "UTC"), utcnow() - timedelta(hours=1))
    schedule = run_scenario.make_schedule(timetable=HOURLY, next_occurrence_at=due_at)
    queues_unreachable(app, monkeypatch, free_port)

    tick()
    monkeypatch.undo()

    [run] = runs_of(schedule.id)
    assert run.job_id is not None and run.dispatched_at is not None
    # Committed claimed with its admission: the pending turn, which claims what no job names, leaves it.
    assert claims.dispatch_pending(RUNS) == 0
    assert engine.redispatch_lost(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 1
    [run] = runs_of(schedule.id)
    assert Job.fetch(run.job_id, connection=redis_connection()).args == (run.id,)


def _tickers_waiting(count: int) -> bool:
    waiting = table_lock_waiters("schedules")
    db.session.rollback()
    return waiting >= count


def test_four_ticker_processes_admit_exactly_one_run_per_occurrence(run_scenario):
    timetable = Timetable.from_json(HOURLY, "UTC")
    due_at = next_occurrence(timetable, utcnow() - timedelta(hours=2))
    schedules = [
        run_scenario.make_schedule(recipients=(), name=f"Race {n}", next_occurrence_at=due_at) for n in range(600)
    ]
    with db.engine.connect() as holder:
        # Every ticker's first query waits behind this lock, so all four start together.
        holder.execute(text("LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE"))
        tickers = [
            subprocess.Popen([sys.executable, "-m", "jobs.tick"], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
            for _ in range(4)
        ]
        wait_for(lambda: _tickers_waiting(4), timeout=60, what="four tickers to wait for the schedules")
        holder.rollback()
    outputs = [ticker.communicate(timeout=120)[0] for ticker in tickers]
    assert all(ticker.returncode == 0 for ticker in tickers), outputs
    # The tickers shared the schedules (SKIP LOCKED batches) rather than each doing them all.
    assert sum(json.loads(output)["handled"] for output in outputs) == len(schedules)

    counts = db.session.execute(select(ScheduleRun.schedule_id, func.count()).group_by(ScheduleRun.schedule_id)).all()
    assert len(counts) == len(schedules)
    assert {count for _, count in counts} == {1}


def test_occurrence_moves_only_from_the_next_occurrence_the_ticker_read(run_scenario):
    seen = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    moved_by_someone_else = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    schedule = run_scenario.make_schedule(timetable=HOURLY, next_occurrence_at=moved_by_someone_else)

    assert record_occurrences([(schedule.id, seen, seen + timedelta(hours=1), seen)]) == 0
    db.session.commit()

    assert reloaded(Schedule, schedule.id).next_occurrence_at == moved_by_someone_else
