"""The load suite (issue 18): thirty people using the console at once, against the whole product.

Uses the workspace `Benchmark: 100 timesheet entries` (bench/dataset.py) with USERS members of
it (`bench-load-01@example.test` …, administrators, so the workspace-export pages are theirs to
see; passwords set afresh each run), SCHEDULES weekly schedules of its saved query (due days
away, so none runs during the suite) and one workspace-export package (made in this process by
the job body before the server starts). Starts the product as production runs it: gunicorn with
gunicorn.conf.py and its defaults (two worker processes of four threads), with the settings
`make run` gives its processes (SESSION_COOKIE_SECURE off on plain-HTTP loopback, a fresh
PROMETHEUS_MULTIPROC_DIR); WORKERS `python -m jobs.worker` processes; and the scheduler. Jobs go
into the Redis database BENCH_REDIS_URL names (default 15).

Then bench/load_users.py (Locust, in its own process) runs the anchor, one person doing the same
things one after another for ANCHOR_SECONDS, and the load, USERS people for SECONDS. Afterwards
it waits for every file to settle and reads each small file's time from request to "succeeded"
from the database (the file's `completed_at` less the moment the person sent the form). While
the load runs, a thread adds up the resident and proportional set sizes of every server
process and the work-horses the workers fork, every MEMORY_SAMPLE_SECONDS; the people's process
reads the CPU time each role (web, workers, scheduler) used while it measured.

One line: {"name": "console_load", "users", "seconds", "requests", "errors", "page_p50_ms",
"page_p95_ms", "file_p95_ms", … "anchor": "one_user_serial", "anchor_seconds", "ratio"} (the
fields: bench/load_figures.py); then the targets: no errors, page p95 under 300 ms, small file
p95 under 3 s. The files, the schedules and the package are removed and every queue emptied
afterwards, so the suite leaves no work behind.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests
from flask import Flask
from sqlalchemy import delete, select, text

from bench.dataset import DATASET, prepare_workspace, sign_in_as_member
from bench.latency import STARTUP_SECONDS, free_port, stop_processes
from bench.load_figures import errors_of, load_line
from bench.process_usage import memory_kib, tree
from bench.schedules import empty_queue, redis_url, remove_runs

PROJECT_ROOT = Path(__file__).resolve().parent.parent
USERS = 30
SECONDS = 60
ANCHOR_SECONDS = 20
# Uncounted seconds after everyone signed in: each gunicorn worker compiles the templates it meets first.
WARMUP_SECONDS = 5
ROWS = 100
WORKERS = 2
SCHEDULES = 3
EMAIL = "bench-load-{:02d}@example.test"
SCHEDULE_PREFIX = "Load: "
MEMORY_SAMPLE_SECONDS = 0.25
SETTLE_SECONDS = 120
TARGET_PAGE_P95_MS = 300.0
TARGET_FILE_P95_MS = 3_000.0


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepare_people(app: Flask, workspace_id: int, password: str) -> list[str]:
    """USERS administrators of the workspace who sign in with `password`; their emails."""
    from app.extensions import db
    from app.services.accounts.authentication import hash_password

    emails = [EMAIL.format(number) for number in range(1, USERS + 1)]
    password_hash = hash_password(password)
    with app.app_context():
        for number, email in enumerate(emails, start=1):
            sign_in_as_member(workspace_id, email, f"Load Person {number}", "admin", password_hash)
        db.session.commit()
    return emails


def prepare_schedules(app: Flask, bench) -> None:
    """SCHEDULES weekly schedules of the saved query, saved as the schedule form saves them; their
    day is three days ahead, so the scheduler started with the suite finds none due."""
    from app.domain.people.access import current_context
    from app.services.schedules.schedule_form import save_schedule
    from app.services.schedules.schedules import ScheduleInput

    day = (datetime.now(UTC) + timedelta(days=3)).strftime("%a").lower()
    remove_schedules(app, bench.workspace_id)
    with app.app_context():
        access = current_context(bench.workspace_id, bench.admin_id)
        assert access is not None, "the benchmark workspace has no administrator"
        for number in range(1, SCHEDULES + 1):
            save_schedule(
                access,
                None,
                ScheduleInput(
                    name=f"{SCHEDULE_PREFIX}weekly hours {number}",
                    source=f"query:{bench.query_id}",
                    format="csv",
                    heading="names",
                    timetable={"kind": "weekly", "days": [day], "time": f"{8 + number:02d}:00", "zone": "UTC"},
                    people=[str(bench.admin_id)],
                ),
            )


def remove_schedules(app: Flask, workspace_id: int) -> None:
    from app.extensions import db
    from app.models.schedule import Schedule

    with app.app_context():
        db.session.execute(
            delete(Schedule).where(Schedule.workspace_id == workspace_id, Schedule.name.startswith(SCHEDULE_PREFIX))
        )
        db.session.commit()


def prepare_package(app: Flask, bench) -> None:
    """One workspace-export package of the workspace's teams, people and entries, made by the job body."""
    from app.domain.workspace_export import export_execution
    from app.extensions import db
    from app.models.export_execution import ExecutionTrigger
    from app.services.workspace_export.coverage import reconcile_coverage
    from app.services.workspace_export.package_production import run_execution

    remove_executions(app, bench.workspace_id)
    with app.app_context():
        # A package is refused while the coverage registry disagrees with the code; `make run`
        # reconciles it at start-up too.
        reconcile_coverage()
        execution_id = export_execution.admit(
            workspace_id=bench.workspace_id,
            trigger=ExecutionTrigger.MANUAL,
            requested_by_id=bench.admin_id,
            settings_snapshot={
                "datasets": ["teams", "people", DATASET],
                "format": "csv",
                "volume_size_bytes": 256 * 1024 * 1024,
                "retention_days": 1,
                "notify_person_ids": [],
                "settings_version": 1,
            },
            allowance_used=1,
            allowance_limit=1,
        ).id
        db.session.commit()
    with app.app_context():
        outcome = run_execution(execution_id)
    if outcome != "succeeded":
        raise SystemExit(f"the load suite's package ended {outcome!r}")


def remove_executions(app: Flask, workspace_id: int) -> None:
    """The workspace's executions and, with them, their packages."""
    from app.extensions import db

    with app.app_context():
        db.session.execute(text("DELETE FROM data_export_executions WHERE workspace_id = :w"), {"w": workspace_id})
        db.session.commit()


class ServerMemory:
    """The highest sums, over the server processes and everything they start, of resident set size
    (pages shared after a fork counted in each process) and proportional set size (shared pages
    divided among the processes sharing them), read from /proc/PID/smaps_rollup."""

    def __init__(self, roots: list[int]) -> None:
        self._roots = roots
        self.peak_rss_kib = 0
        self.peak_pss_kib = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-load-memory", daemon=True)

    def __enter__(self) -> ServerMemory:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stopped.wait(MEMORY_SAMPLE_SECONDS):
            rss = pss = 0
            for pid in tree(self._roots):
                sizes = memory_kib(pid)
                rss, pss = rss + sizes.get("Rss:", 0), pss + sizes.get("Pss:", 0)
            self.peak_rss_kib, self.peak_pss_kib = max(self.peak_rss_kib, rss), max(self.peak_pss_kib, pss)


def start_processes(environment: dict[str, str], log_folder: Path) -> list[subprocess.Popen]:
    """The web server, the workers and the scheduler, each logging to its own file."""
    flask = [sys.executable, "-m", "flask", "--app", "wsgi"]
    commands = {
        "web": [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
        **{f"worker-{number}": [sys.executable, "-m", "jobs.worker"] for number in range(1, WORKERS + 1)},
        "scheduler": [*flask, "scheduler"],
    }
    processes = []
    for name, command in commands.items():
        log = (log_folder / f"load-{name}.log").open("w")
        processes.append(
            subprocess.Popen(command, cwd=PROJECT_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)
        )
    return processes


def wait_for_web(base: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            if requests.get(f"{base}/login", timeout=30).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            pass
        if time.monotonic() > deadline:
            raise SystemExit("the web server did not answer within a minute; see load-web.log")
        time.sleep(0.2)


@dataclass(frozen=True)
class SettledFile:
    status: str
    requested_at: datetime
    started_at: datetime | None
    completed_at: datetime | None


def settled_files(app: Flask, workspace_id: int) -> dict[int, SettledFile]:
    """Every file of the workspace by id, once none is queued or running (or SETTLE_SECONDS have passed)."""
    from app.extensions import db
    from app.models import ExportFile
    from app.models.export_file import TERMINAL_STATUSES

    deadline = time.monotonic() + SETTLE_SECONDS
    with app.app_context():
        while True:
            files = {
                row.id: SettledFile(row.status, row.requested_at, row.started_at, row.completed_at)
                for row in db.session.execute(
                    select(
                        ExportFile.id,
                        ExportFile.status,
                        ExportFile.requested_at,
                        ExportFile.started_at,
                        ExportFile.completed_at,
                    ).where(ExportFile.workspace_id == workspace_id)
                )
            }
            db.session.rollback()
            if all(file.status in TERMINAL_STATUSES for file in files.values()):
                return files
            if time.monotonic() > deadline:
                _log(f"load: files still unsettled after {SETTLE_SECONDS} s; they count as not succeeded")
                return files
            time.sleep(1)


def file_outcomes(requested: list[dict], files: dict[int, SettledFile]) -> tuple[dict[str, list[float]], int]:
    """For the requested files that succeeded, milliseconds from sending the form to "succeeded"
    ("total"), from admission until a worker started it ("wait") and from then to "succeeded"
    ("run"); and how many did not succeed."""
    from app.models.export_file import FileStatus

    timings: dict[str, list[float]] = {"total": [], "wait": [], "run": []}
    not_succeeded = 0
    for record in requested:
        file = files.get(record["id"])
        if file is None or file.status != FileStatus.SUCCEEDED or not file.completed_at or not file.started_at:
            not_succeeded += 1
            continue
        timings["total"].append((file.completed_at.timestamp() - record["sent_at"]) * 1000)
        timings["wait"].append((file.started_at - file.requested_at).total_seconds() * 1000)
        timings["run"].append((file.completed_at - file.started_at).total_seconds() * 1000)
    return timings, not_succeeded


def files_completed_within(files: dict[int, SettledFile], window: list[float]) -> int:
    """How many files the workers finished within the window (Unix times), whoever asked for them."""
    start, end = window
    return sum(1 for file in files.values() if file.completed_at and start <= file.completed_at.timestamp() <= end)


def run_people(setup: dict, log_folder: Path) -> dict:
    """bench/load_users.py in its own process; what its people saw."""
    with (log_folder / "load-users.log").open("w") as log:
        done = subprocess.run(
            [sys.executable, "-m", "bench.load_users", json.dumps(setup)],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            check=False,
        )
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"the simulated people stopped (exit {done.returncode}); see {log_folder / 'load-users.log'}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_suite(app: Flask, scratch_root: Path) -> None:
    from bench.run_all import _emit, _target

    bench, built = prepare_workspace(app, ROWS)
    _log(f"load: workspace of {ROWS} timesheet entries {'built' if built else 'reused'}")
    password = secrets.token_urlsafe(16)
    emails = prepare_people(app, bench.workspace_id, password)
    prepare_schedules(app, bench)
    prepare_package(app, bench)
    metrics = scratch_root / "load-metrics"
    metrics.mkdir()
    port = free_port()
    # As `make run` sets them: plain HTTP on loopback (a Secure cookie would never come back), and
    # one metrics folder for every process.
    environment = {
        **os.environ,
        "REDIS_URL": redis_url(),
        "SESSION_COOKIE_SECURE": "false",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
        "WEB_BIND": f"127.0.0.1:{port}",
    }
    empty_queue(environment)
    processes = start_processes(environment, scratch_root)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_web(base)
        _log(f"load: one person for {ANCHOR_SECONDS} s, then {USERS} people for {SECONDS} s")
        setup = {
            "base": base,
            "emails": emails,
            "password": password,
            "workspace_id": bench.workspace_id,
            "query_id": bench.query_id,
            "users": USERS,
            "seconds": SECONDS,
            "anchor_seconds": ANCHOR_SECONDS,
            "warmup_seconds": WARMUP_SECONDS,
            "server_pids": {
                "web": [processes[0].pid],
                "workers": [process.pid for process in processes[1 : 1 + WORKERS]],
                "scheduler": [processes[-1].pid],
            },
        }
        before = os.getloadavg()
        with ServerMemory([process.pid for process in processes]) as memory:
            seen = run_people(setup, scratch_root)
        after = os.getloadavg()
        files = settled_files(app, bench.workspace_id)
    finally:
        stop_processes(processes)
        empty_queue(environment)
        remove_runs(app, bench.workspace_id)
        remove_executions(app, bench.workspace_id)
    file_ms, load_failed = file_outcomes(seen["load"]["files"], files)
    _, anchor_failed = file_outcomes(seen["anchor"]["files"], files)
    line = load_line(
        seen["load"],
        seen["anchor"],
        file_ms,
        (load_failed, anchor_failed),
        users=USERS,
        seconds=SECONDS,
        anchor_seconds=ANCHOR_SECONDS,
        rows=ROWS,
        files_done=files_completed_within(files, seen["load"]["window"]),
        memory_mb=(memory.peak_rss_kib / 1024, memory.peak_pss_kib / 1024),
        load_averages=(before, after),
    )
    for error in sorted({error for phase in seen.values() for error in errors_of(phase, 0)}):
        _log(f"load: error: {error}")
    _emit(line)
    _emit(_target("target_console_load_errors", line["errors"], 0, "max"))
    _emit(_target("target_console_load_page_p95_ms", line["page_p95_ms"], TARGET_PAGE_P95_MS, "max"))
    _emit(_target("target_console_load_file_p95_ms", line["file_p95_ms"], TARGET_FILE_P95_MS, "max"))
