"""The schedule-run throughput case: how fast a backlog of due runs becomes mail in people's inboxes.

BENCH_THROUGHPUT_RUNS (default 10,000) hourly query schedules, each a 100-row CSV to three
members of the workspace, are all due at once. Two `python -m jobs.worker` processes listen, with
mail going to an SMTP server (aiosmtpd) in this process on a free local port. The clock starts
when one `python -m jobs.tick` admits and dispatches the runs, and stops when every recipient's
message has been submitted (each delivery row `submitted`, the server holding every message).

One line: {"name": "schedule_run_throughput", "runs", "recipients_per_run", "workers", "rows",
"seconds", "runs_per_second", "messages", "slowest_run_wait_seconds", "p50_run_wait_seconds",
"p95_run_wait_seconds", "load_average"}: a run's wait is from the ticker's start to its last
recipient's submission (the database's clock), so the slowest run's wait says how long the last
of a Monday 09:00 backlog waits for its mail. Not in the default run (`BENCH_SUITES=throughput`);
the runs, files and schedules it made are removed and every queue emptied afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from aiosmtpd.controller import Controller
from flask import Flask
from sqlalchemy import delete, func, select, text

from bench.dataset import prepare_workspace, sign_in_as_member
from bench.latency import free_port
from bench.percentiles import percentile
from bench.schedules import empty_queue, measure, redis_url, remove_runs

ROWS = 100
RECIPIENTS_PER_RUN = 3
WORKERS = 2
SETTLE_TIMEOUT_SECONDS = 4 * 3600
WORKSPACE_NAME_SUFFIX = "throughput"


def runs_wanted() -> int:
    return int(os.environ.get("BENCH_THROUGHPUT_RUNS", "10000"))


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class _CountingHandler:
    """Accepts every message and counts its recipients."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.recipients = 0

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: N802 - aiosmtpd's hook name
        with self.lock:
            self.recipients += len(envelope.rcpt_tos)
        return "250 Message accepted for delivery"


def prepare(app: Flask, workspace_id: int, query_id: int, runs: int, due_at: datetime) -> list[int]:
    """`runs` due schedules of the saved query, each to the same three members; their ids."""
    from app.extensions import db
    from app.models import Person, SavedQuery
    from app.models.schedule import Schedule, ScheduleRecipient

    with app.app_context():
        people = []
        for number in range(RECIPIENTS_PER_RUN):
            email = f"bench-recipient-{number}@example.test"
            sign_in_as_member(workspace_id, email, f"Benchmark Recipient {number}", "member", "!")
            db.session.flush()
            people.append(db.session.scalar(select(Person.id).where(Person.email == email)))
        query = db.session.get(SavedQuery, query_id)
        db.session.execute(delete(Schedule).where(Schedule.workspace_id == workspace_id))
        ids = list(
            db.session.scalars(
                text(
                    "INSERT INTO schedules (workspace_id, name, kind, owner_id, format, heading, source_query_id,"
                    " query_definition, query_version, timetable, next_occurrence_at, failure_streak, status,"
                    " custom_message, version, created_at, updated_at)"
                    " SELECT :w, 'Throughput ' || g, 'query', :owner, 'csv', 'names', :query,"
                    " CAST(:definition AS json), 1,"
                    " json_build_object('kind', 'hourly', 'minute', 0, 'zone', 'UTC'),"
                    " :due_at, 0, 'active', '', 1, now(), now()"
                    " FROM generate_series(1, :count) AS g RETURNING id"
                ),
                {
                    "w": workspace_id,
                    "owner": query.owner_id,
                    "query": query.id,
                    "definition": json.dumps(query.definition()),
                    "due_at": due_at,
                    "count": runs,
                },
            )
        )
        db.session.execute(
            text(
                f"INSERT INTO {ScheduleRecipient.__tablename__} (schedule_id, position, person_id, email, address_key)"
                " SELECT s, p.position, p.person, NULL, 'person:' || p.person"
                " FROM unnest(CAST(:ids AS integer[])) AS s,"
                " unnest(CAST(:people AS integer[])) WITH ORDINALITY AS p(person, position)"
            ),
            {"ids": ids, "people": people},
        )
        db.session.commit()
        db.session.execute(text("ANALYZE schedules"))
        db.session.commit()
        return ids


def start_workers(environment: dict[str, str], log_folder: Path) -> list[subprocess.Popen]:
    processes = []
    for number in range(WORKERS):
        log = (log_folder / f"throughput-worker-{number}.log").open("w")
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "jobs.worker"],
                cwd=Path(__file__).resolve().parent.parent,
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    return processes


def wait_for_workers(app: Flask, environment: dict[str, str]) -> None:
    from redis import Redis
    from rq import Queue, Worker

    from app.services.work.queue import WorkPriority, queue_name

    queue = Queue(
        queue_name(environment["EXPORT_QUEUE"], WorkPriority.SCHEDULED), connection=Redis.from_url(redis_url())
    )
    deadline = time.monotonic() + 120
    while len(Worker.all(queue=queue)) < WORKERS:
        if time.monotonic() > deadline:
            raise SystemExit("the workers did not register within two minutes; see throughput-worker-*.log")
        time.sleep(0.2)


def _submitted(app: Flask, workspace_id: int) -> tuple[int, int]:
    """(recipient deliveries submitted, runs failed) in the workspace."""
    from app.extensions import db
    from app.models.schedule import DeliveryStatus, RecipientDelivery, RunStatus, ScheduleRun

    with app.app_context():
        submitted = db.session.scalar(
            select(func.count())
            .select_from(RecipientDelivery)
            .join(ScheduleRun, ScheduleRun.id == RecipientDelivery.run_id)
            .where(ScheduleRun.workspace_id == workspace_id, RecipientDelivery.status == DeliveryStatus.SUBMITTED)
        )
        failed = db.session.scalar(
            select(func.count()).where(ScheduleRun.workspace_id == workspace_id, ScheduleRun.status == RunStatus.FAILED)
        )
        db.session.rollback()
        return submitted, failed


def run_waits(app: Flask, workspace_id: int, started_at: datetime) -> list[float]:
    """Each run's seconds from `started_at` to its last recipient's submission."""
    from app.extensions import db
    from app.models.schedule import RecipientDelivery, ScheduleRun

    with app.app_context():
        last = db.session.scalars(
            select(func.max(RecipientDelivery.submitted_at))
            .join(ScheduleRun, ScheduleRun.id == RecipientDelivery.run_id)
            .where(ScheduleRun.workspace_id == workspace_id)
            .group_by(RecipientDelivery.run_id)
        ).all()
        return [(moment - started_at).total_seconds() for moment in last]


def throughput_suite(app: Flask, scratch_root: Path) -> None:
    from app.extensions import db

    runs = runs_wanted()
    bench, built = prepare_workspace(app, ROWS)
    _log(f"throughput: workspace of {ROWS} timesheet entries {'built' if built else 'reused'}; {runs:,} schedules")
    now = datetime.now(UTC)
    prepare(app, bench.workspace_id, bench.query_id, runs, now.replace(minute=0, second=0, microsecond=0))
    handler = _CountingHandler()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    environment = {
        **os.environ,
        "REDIS_URL": redis_url(),
        "MAIL_URL": f"smtp://127.0.0.1:{port}",
    }
    workers = start_workers(environment, scratch_root)
    try:
        wait_for_workers(app, environment)
        with app.app_context():
            started_at = db.session.scalar(select(func.statement_timestamp()))
            db.session.rollback()
        clock = time.perf_counter()
        measure(app, 1, environment)
        expected = runs * RECIPIENTS_PER_RUN
        deadline = time.monotonic() + SETTLE_TIMEOUT_SECONDS
        while True:
            submitted, failed = _submitted(app, bench.workspace_id)
            if failed:
                raise SystemExit(f"{failed} runs failed; see throughput-worker-*.log")
            if submitted >= expected:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"only {submitted:,} of {expected:,} messages were submitted within the time allowed")
            time.sleep(0.5)
        seconds = time.perf_counter() - clock
        waits = run_waits(app, bench.workspace_id, started_at)
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)
        controller.stop()
        empty_queue(environment)
        remove_runs(app, bench.workspace_id)
    print(
        json.dumps(
            {
                "name": "schedule_run_throughput",
                "runs": runs,
                "recipients_per_run": RECIPIENTS_PER_RUN,
                "workers": WORKERS,
                "rows": ROWS,
                "seconds": round(seconds, 1),
                "runs_per_second": round(runs / seconds, 1),
                "messages": handler.recipients,
                "slowest_run_wait_seconds": round(max(waits), 1),
                "p50_run_wait_seconds": round(percentile(waits, 50), 1),
                "p95_run_wait_seconds": round(percentile(waits, 95), 1),
                "load_average": [round(load, 2) for load in os.getloadavg()],
            }
        ),
        flush=True,
    )
