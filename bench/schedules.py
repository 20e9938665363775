"""The schedules suite: BENCH_SCHEDULES (default 100,000) due schedules admitted by one ticker,
and by four tickers racing.

Each case fills the benchmark workspace with SCHEDULES active hourly schedules (minute 0–59 in
four zones: 240 distinct timetables) whose next occurrence is in the hour before the last full
hour (so each has exactly one due occurrence), starts the tickers
as separate `python -m jobs.tick` processes, and holds an exclusive lock on the schedules table
until every ticker waits for it; the clock runs from the release until the last ticker exits.
Each ticker dispatches what it admits onto RQ, as in production, into the Redis database
BENCH_REDIS_URL names (default 15), whose benchmark queue is emptied afterwards.

One line per case: {"name": "schedule_tick", "schedules", "tickers", "seconds", "runs",
"duplicates"}; `runs` must equal the due occurrences and `duplicates` (runs beyond one per
schedule and occurrence) must be 0; the targets: four tickers admit them in under 30 s, with no
duplicate and no occurrence missed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flask import Flask
from sqlalchemy import delete, func, select, text

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SCHEDULES = int(os.environ.get("BENCH_SCHEDULES", "100000"))
TICKER_COUNTS = (1, 4)
# Four tickers, as four scheduler machines would run them, admit every due schedule within this.
TARGET_TICKERS = 4
TARGET_SECONDS = 30.0
WORKSPACE_NAME = "Benchmark: schedules"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"
# Zones a whole number of hours from UTC, so minute M local is minute M in UTC: 240 timetables.
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC")


def redis_url() -> str:
    return os.environ.get("BENCH_REDIS_URL") or DEFAULT_REDIS_URL


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepare(app: Flask, schedules: int, due_at: datetime) -> int:
    """The benchmark workspace with exactly `schedules` due schedules and no runs; its id."""
    from app.extensions import db
    from app.models import Membership, Person, SavedQuery, Workspace
    from app.models.schedule import Schedule
    from bench.dataset import ADMIN_EMAIL

    with app.app_context():
        admin = db.session.execute(select(Person).where(Person.email == ADMIN_EMAIL)).scalar_one_or_none()
        if admin is None:
            admin = Person(email=ADMIN_EMAIL, name="Benchmark Admin", password_hash="!")
            db.session.add(admin)
            db.session.flush()
        workspace = db.session.execute(select(Workspace).where(Workspace.name == WORKSPACE_NAME)).scalar_one_or_none()
        if workspace is None:
            workspace = Workspace(name=WORKSPACE_NAME, status="live", sandbox=False)
            db.session.add(workspace)
            db.session.flush()
            db.session.add(
                Membership(
                    workspace_id=workspace.id,
                    person_id=admin.id,
                    role="admin",
                    grants=[],
                    dataset_grants=["timesheet_entries"],
                    team_scope=None,
                )
            )
            db.session.add(
                SavedQuery(
                    workspace_id=workspace.id,
                    owner_id=admin.id,
                    name="Hours",
                    dataset="timesheet_entries",
                    columns=["id", "hours"],
                    filters=[],
                    sort=[],
                    parameters=[],
                    row_limit=None,
                )
            )
            db.session.flush()
        query = db.session.execute(select(SavedQuery).where(SavedQuery.workspace_id == workspace.id)).scalar_one()
        db.session.execute(delete(Schedule).where(Schedule.workspace_id == workspace.id))
        db.session.execute(
            text(
                "INSERT INTO schedules (workspace_id, name, kind, owner_id, format, heading, source_query_id,"
                " query_definition, query_version, timetable, next_occurrence_at, failure_streak, status,"
                " custom_message, version, created_at, updated_at)"
                " SELECT :w, 'Schedule ' || g, 'query', :owner, 'csv', 'names', :query,"
                " CAST(:definition AS json), 1,"
                " json_build_object('kind', 'hourly', 'minute', g % 60, 'zone', (CAST(:zones AS text[]))[1 + g % 4]),"
                " :due_at + (g % 60) * interval '1 minute', 0, 'active', '', 1,"
                " now(), now()"
                " FROM generate_series(1, :count) AS g"
            ),
            {
                "w": workspace.id,
                "owner": admin.id,
                "query": query.id,
                "definition": json.dumps(query.definition()),
                "zones": list(ZONES),
                "due_at": due_at,
                "count": schedules,
            },
        )
        db.session.commit()
        db.session.execute(text("ANALYZE schedules"))
        db.session.commit()
        return workspace.id


def _tickers_waiting(connection, count: int) -> bool:
    waiting = connection.execute(
        text("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = CAST('schedules' AS regclass)")
    ).scalar_one()
    return waiting >= count


def measure(app: Flask, tickers: int, environment: dict[str, str]) -> float:
    """Seconds from releasing the tickers until the last one exited."""
    from app.extensions import db

    with app.app_context(), db.engine.connect() as holder, db.engine.connect() as watcher:
        holder.execute(text("LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE"))
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "jobs.tick"],
                cwd=PROJECT_ROOT,
                env=environment,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(tickers)
        ]
        deadline = time.monotonic() + 120
        while not _tickers_waiting(watcher, tickers):
            watcher.rollback()
            if time.monotonic() > deadline:
                raise SystemExit("the tickers did not reach the schedules table within two minutes")
            time.sleep(0.05)
        started = time.perf_counter()
        holder.rollback()
        for process in processes:
            process.communicate()
        seconds = time.perf_counter() - started
    if any(process.returncode for process in processes):
        raise SystemExit("a ticker failed; its output is above")
    return seconds


def count_runs(app: Flask, workspace_id: int) -> tuple[int, int]:
    """(runs, duplicates): duplicates are runs beyond one per schedule and occurrence."""
    from app.extensions import db
    from app.models.schedule import ScheduleRun

    with app.app_context():
        runs = db.session.scalar(select(func.count()).where(ScheduleRun.workspace_id == workspace_id))
        distinct = db.session.scalar(
            select(func.count()).select_from(
                select(ScheduleRun.schedule_id, ScheduleRun.occurrence_at)
                .where(ScheduleRun.workspace_id == workspace_id)
                .distinct()
                .subquery()
            )
        )
        return runs, runs - distinct


def empty_queue(environment: dict[str, str]) -> None:
    """Every queue of the product (each priority's) emptied in the benchmark's Redis database."""
    from redis import Redis
    from rq import Queue

    from app.services.work.queue import WorkPriority, queue_name

    connection = Redis.from_url(environment["REDIS_URL"])
    for priority in WorkPriority:
        Queue(queue_name(environment["EXPORT_QUEUE"], priority), connection=connection).empty()


def remove_runs(app: Flask, workspace_id: int) -> None:
    """The runs a case admitted, the files they made and their schedules, gone, so no later suite
    finds queued work the benchmark left."""
    from app.extensions import db
    from app.models import ExportFile
    from app.models.schedule import Schedule, ScheduleRun

    with app.app_context():
        db.session.execute(delete(ScheduleRun).where(ScheduleRun.workspace_id == workspace_id))
        db.session.execute(delete(ExportFile).where(ExportFile.workspace_id == workspace_id))
        db.session.execute(delete(Schedule).where(Schedule.workspace_id == workspace_id))
        db.session.commit()


def queue_backlog(app: Flask, environment: dict[str, str], runs: int) -> int:
    """`runs` schedule runs admitted and queued by one ticker, as a Monday 09:00 leaves them; the
    schedules' workspace id (for `remove_runs`)."""
    now = datetime.now(UTC)
    workspace_id = prepare(app, runs, now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=1))
    measure(app, 1, environment)
    return workspace_id


def schedule_suite(app: Flask) -> None:
    environment = {**os.environ, "REDIS_URL": redis_url()}
    now = datetime.now(UTC)
    due_at = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    lines = []
    for tickers in TICKER_COUNTS:
        workspace_id = prepare(app, SCHEDULES, due_at)
        _log(f"schedules: {SCHEDULES:,} due schedules, {tickers} ticker(s)")
        seconds = measure(app, tickers, environment)
        runs, duplicates = count_runs(app, workspace_id)
        empty_queue(environment)
        remove_runs(app, workspace_id)
        line = {
            "name": "schedule_tick",
            "schedules": SCHEDULES,
            "tickers": tickers,
            "seconds": round(seconds, 3),
            "runs": runs,
            "duplicates": duplicates,
        }
        print(json.dumps(line), flush=True)
        lines.append(line)
    from bench.run_all import _emit, _target

    for line in lines:
        if line["tickers"] == TARGET_TICKERS:
            _emit(
                _target(
                    f"target_schedule_tick_{TARGET_TICKERS}_tickers_seconds", line["seconds"], TARGET_SECONDS, "max"
                )
            )
            _emit(_target("target_schedule_tick_missed_occurrences", SCHEDULES - line["runs"], 0, "max"))
            _emit(_target("target_schedule_tick_duplicates", line["duplicates"], 0, "max"))
