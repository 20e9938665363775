"""The latency suite: how soon a small file is ready after a person asks for it.

Starts the web app (gunicorn serving wsgi:app on a free local port), one `python -m jobs.worker`
and the scheduler (`flask --app wsgi scheduler`) as separate processes, signs in through the
login page, then REQUESTS times, one after another, posts the CSV request form for a saved query
over a workspace of ROWS timesheet entries and asks the file's progress fragment every
POLL_SECONDS until it answers 286 with "succeeded". The clock runs from sending the request to
that answer. Jobs go into the Redis database BENCH_REDIS_URL names (default 15).

Two cases: with nothing else queued, and with BACKLOG_RUNS schedule runs admitted and queued by a
ticker just before (the scheduled queue; the file goes on the interactive one, which workers take
first). One line each: {"name": "small_file_latency" or "small_file_latency_under_backlog",
("backlog"), "requests", "rows", "p50_ms", "p95_ms", "max_ms"}; then the targets (p50 under
1,000 ms, p95 under 2,000 ms). The backlog's runs and schedules are removed and every queue
emptied afterwards, so the suite leaves no work behind.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests
from flask import Flask

from bench.dataset import prepare_workspace
from bench.percentiles import percentile
from bench.schedules import empty_queue, queue_backlog, redis_url, remove_runs

PROJECT_ROOT = Path(__file__).resolve().parent.parent
REQUESTS = 50
ROWS = 100
# The benchmark's client asks far more often than the page does, so the figure is the system's,
# not the page's polling interval.
POLL_SECONDS = 0.02
TARGET_P50_MS = 1_000.0
TARGET_P95_MS = 2_000.0
STARTUP_SECONDS = 60
REQUEST_TIMEOUT_SECONDS = 60
# Schedule runs queued ahead of the small files in the second case, as a Monday 09:00 leaves them.
BACKLOG_RUNS = 10_000
LATENCY_EMAIL = "bench-latency@example.test"
CSRF_TOKEN = re.compile(r'"X-CSRFToken": "([^"]+)"')


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def prepare_requester(app: Flask, workspace_id: int, password: str) -> None:
    """A member of the workspace who can sign in with `password` and read the timesheet entries."""
    from app.extensions import db
    from app.services.accounts.authentication import hash_password
    from bench.dataset import sign_in_as_member

    with app.app_context():
        sign_in_as_member(workspace_id, LATENCY_EMAIL, "Benchmark Requester", "member", hash_password(password))
        db.session.commit()


def start_processes(environment: dict[str, str], port: int, log_folder: Path) -> list[subprocess.Popen]:
    commands = {
        "web": [
            sys.executable,
            "-m",
            "gunicorn",
            "--workers",
            "1",
            "--threads",
            "4",
            "--bind",
            f"127.0.0.1:{port}",
            "wsgi:app",
        ],
        "worker": [sys.executable, "-m", "jobs.worker"],
        "scheduler": [sys.executable, "-m", "flask", "--app", "wsgi", "scheduler"],
    }
    processes = []
    for name, command in commands.items():
        log = (log_folder / f"latency-{name}.log").open("w")
        processes.append(
            subprocess.Popen(command, cwd=PROJECT_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)
        )
    return processes


def stop_processes(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def sign_in(base: str, password: str) -> tuple[requests.Session, str]:
    """A signed-in session and its CSRF token, once the server answers."""
    session = requests.Session()
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            page = session.get(f"{base}/login", timeout=5)
            break
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                raise SystemExit("the web server did not answer within a minute; see latency-web.log") from None
            time.sleep(0.2)
    token = CSRF_TOKEN.search(page.text).group(1)
    signed_in = session.post(
        f"{base}/login",
        data={"email": LATENCY_EMAIL, "password": password, "csrf_token": token},
        allow_redirects=False,
        timeout=10,
    )
    if signed_in.status_code != 302:
        raise SystemExit(f"signing in answered {signed_in.status_code}")
    return session, token


def request_and_wait(session: requests.Session, base: str, workspace_id: int, query_id: int, token: str) -> float:
    """Milliseconds from posting the request until the progress fragment says succeeded."""
    started = time.perf_counter()
    response = session.post(
        f"{base}/w/{workspace_id}/queries/{query_id}/files",
        data={"format": "csv", "heading": "names", "csrf_token": token},
        allow_redirects=False,
        timeout=10,
    )
    if response.status_code != 302:
        raise SystemExit(f"the file request answered {response.status_code}")
    progress_url = f"{base}{response.headers['Location']}/progress"
    deadline = time.monotonic() + REQUEST_TIMEOUT_SECONDS
    while True:
        fragment = session.get(progress_url, headers={"HX-Request": "true"}, timeout=10)
        if fragment.status_code == 286:
            if "succeeded" not in fragment.text:
                raise SystemExit(f"a file settled without succeeding: {fragment.text}")
            return (time.perf_counter() - started) * 1000
        if time.monotonic() > deadline:
            raise SystemExit("a file did not settle within a minute; see latency-worker.log")
        time.sleep(POLL_SECONDS)


def _measure(app: Flask, bench, password: str, environment: dict[str, str], scratch_root: Path) -> list[float]:
    """REQUESTS small files, one after another, through freshly started processes; milliseconds each."""
    port = free_port()
    processes = start_processes(environment, port, scratch_root)
    try:
        base = f"http://127.0.0.1:{port}"
        session, token = sign_in(base, password)
        # One request first, not counted: the worker and the server import their modules on first use.
        request_and_wait(session, base, bench.workspace_id, bench.query_id, token)
        return [request_and_wait(session, base, bench.workspace_id, bench.query_id, token) for _ in range(REQUESTS)]
    finally:
        stop_processes(processes)


def _report(name: str, timings: list[float], **extra: int) -> None:
    p50, p95 = percentile(timings, 50), percentile(timings, 95)
    line = {
        "name": name,
        **extra,
        "requests": REQUESTS,
        "rows": ROWS,
        "p50_ms": round(p50),
        "p95_ms": round(p95),
        "max_ms": round(max(timings)),
    }
    print(json.dumps(line), flush=True)
    from bench.run_all import _emit, _target

    _emit(_target(f"target_{name}_p50_ms", round(p50), TARGET_P50_MS, "max"))
    _emit(_target(f"target_{name}_p95_ms", round(p95), TARGET_P95_MS, "max"))


def latency_suite(app: Flask, scratch_root: Path) -> None:
    bench, built = prepare_workspace(app, ROWS)
    _log(f"latency: workspace of {ROWS} timesheet entries {'built' if built else 'reused'}")
    password = secrets.token_urlsafe(16)
    prepare_requester(app, bench.workspace_id, password)
    # The server speaks plain HTTP on the loopback interface: a Secure cookie would never come back.
    environment = {**os.environ, "REDIS_URL": redis_url(), "SESSION_COOKIE_SECURE": "false"}
    empty_queue(environment)
    try:
        _report("small_file_latency", _measure(app, bench, password, environment, scratch_root))
        _log(f"latency: {BACKLOG_RUNS:,} schedule runs queued ahead of the small files")
        backlog_workspace = queue_backlog(app, environment, BACKLOG_RUNS)
        try:
            timings = _measure(app, bench, password, environment, scratch_root)
        finally:
            remove_runs(app, backlog_workspace)
        _report("small_file_latency_under_backlog", timings, backlog=BACKLOG_RUNS)
    finally:
        empty_queue(environment)
