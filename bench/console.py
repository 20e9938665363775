"""The console suite: how fast list pages answer with BENCH_CONSOLE_FILES (default 1,000,000) files
behind them.

Fills FILES export files across WORKSPACES workspaces (in one INSERT … SELECT), then starts the
web app under gunicorn as production runs it (gunicorn.conf.py, two workers) and, with a local
load generator (one client, requests one after another), asks each page REQUESTS times after
WARMUP uncounted requests (enough for both workers to have compiled the page's templates):
the staff files list unfiltered, filtered by status and by workspace, the hundredth page and the
middle page of the list (through their keyset cursors), and a workspace's own files list as its
requester sees it.

One JSON line per page: {"name", "rows", "requests", "p50_ms", "p95_ms", "max_ms", "load_average"}
(the machine's 1, 5 and 15 minute load averages as the page's requests ended: on a shared machine
they say how much of the time was the machine's); then the target (p95 under 50 ms) for each.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import requests
from flask import Flask
from sqlalchemy import delete, func, select, text

from bench.latency import CSRF_TOKEN, STARTUP_SECONDS, free_port
from bench.percentiles import percentile

PROJECT_ROOT = Path(__file__).resolve().parent.parent
FILES = int(os.environ.get("BENCH_CONSOLE_FILES", "1000000"))
WORKSPACES = 20
REQUESTS = 200
WARMUP = 10
TARGET_P95_MS = 50.0
WORKSPACE_PREFIX = "Console benchmark workspace "
STAFF_EMAIL = "bench-console-staff@example.test"
REQUESTER_EMAIL = "bench-console-requester@example.test"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepare(app: Flask, password: str) -> tuple[int, int]:
    """The workspaces and their FILES files (rebuilt when the count differs); returns the first
    workspace's id and the number of files its requester owns."""
    from app.extensions import db
    from app.models import ExportFile, Membership, Person, Workspace
    from app.services.accounts.authentication import hash_password

    with app.app_context():
        people = {}
        for email, name, is_staff in (
            (STAFF_EMAIL, "Console Staff", True),
            (REQUESTER_EMAIL, "Console Requester", False),
        ):
            person = db.session.scalar(select(Person).where(Person.email == email))
            if person is None:
                person = Person(email=email, name=name, password_hash="!")
                db.session.add(person)
            person.password_hash = hash_password(password)
            person.is_staff = is_staff
            person.staff_permissions = ["staff.view"] if is_staff else []
            people[email] = person
        db.session.flush()
        workspaces = []
        for number in range(1, WORKSPACES + 1):
            name = f"{WORKSPACE_PREFIX}{number}"
            workspace = db.session.scalar(select(Workspace).where(Workspace.name == name))
            if workspace is None:
                workspace = Workspace(name=name, status="live", sandbox=False)
                db.session.add(workspace)
                db.session.flush()
                db.session.add(
                    Membership(
                        workspace_id=workspace.id,
                        person_id=people[REQUESTER_EMAIL].id,
                        role="member",
                        grants=[],
                        dataset_grants=["timesheet_entries"],
                    )
                )
            workspaces.append(workspace.id)
        db.session.commit()
        ids = tuple(workspaces)
        present = db.session.scalar(
            select(func.count()).select_from(ExportFile).where(ExportFile.workspace_id.in_(ids))
        )
        if present != FILES:
            _log(f"console: filling {FILES:,} files across {WORKSPACES} workspaces")
            db.session.execute(delete(ExportFile).where(ExportFile.workspace_id.in_(ids)))
            db.session.execute(
                text(_FILL),
                {
                    "workspaces": list(ids),
                    "requester": people[REQUESTER_EMAIL].id,
                    "count": FILES,
                    "run": secrets.token_hex(4),
                },
            )
            db.session.commit()
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(text("VACUUM (ANALYZE) query_exports"))
        own = db.session.scalar(select(func.count()).select_from(ExportFile).where(ExportFile.workspace_id == ids[0]))
        return ids[0], own


# Statuses mixed as in life: mostly succeeded, some failed, a few queued; times over 60 days.
_FILL = """
INSERT INTO query_exports (workspace_id, requester_id, kind, source_name, source_version, dataset, request,
    format, heading, include_descriptions, exact_values, time_zone, status, storage_key, file_name,
    rows_written, attempt_count, requested_at, completed_at, expires_at, size_bytes, row_count, failure_code)
SELECT (:workspaces)[1 + g % cardinality(:workspaces)], :requester, 'query', 'Hours export ' || (g % 97), 1,
    'timesheet_entries', '{"columns": ["id"], "filters": [], "sort": [], "parameters": {}}'::json,
    CASE WHEN g % 3 = 0 THEN 'xlsx' ELSE 'csv' END, 'names', false, false, 'UTC',
    CASE WHEN g % 10 < 7 THEN 'succeeded' WHEN g % 10 < 9 THEN 'failed' ELSE 'queued' END,
    'bench-console/' || :run || '/' || g, 'hours-' || g || '.csv', 0, 1,
    now() - (g * interval '52 seconds'),
    CASE WHEN g % 10 < 9 THEN now() - (g * interval '52 seconds') END,
    CASE WHEN g % 10 < 7 THEN now() - (g * interval '52 seconds') + interval '30 days' END,
    CASE WHEN g % 10 < 7 THEN 1000 + g END, CASE WHEN g % 10 < 7 THEN g % 5000 END,
    CASE WHEN g % 10 BETWEEN 7 AND 8 THEN 'internal' END
FROM generate_series(1, :count) AS g
"""


def _sign_in(base: str, email: str, password: str) -> requests.Session:
    session = requests.Session()
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            page = session.get(f"{base}/login", timeout=30)
            break
        except (requests.ConnectionError, requests.Timeout):
            if time.monotonic() > deadline:
                raise SystemExit("the web server did not answer within a minute; see console-web.log") from None
            time.sleep(0.2)
    token = CSRF_TOKEN.search(page.text).group(1)
    answer = session.post(
        f"{base}/login",
        data={"email": email, "password": password, "csrf_token": token},
        allow_redirects=False,
        timeout=30,
    )
    if answer.status_code != 302:
        raise SystemExit(f"signing in as {email} answered {answer.status_code}")
    return session


def _timings(session: requests.Session, url: str) -> list[float]:
    for _ in range(WARMUP):  # not counted: each worker's first request compiles the templates
        session.get(url, timeout=30)
    timings = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        response = session.get(url, timeout=30)
        timings.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")
    return timings


def _deep_page_url(session: requests.Session, base: str, pages: int) -> str:
    """The URL of the staff files list `pages` pages in, found by following "Next page"."""
    url = f"{base}/staff/files"
    for _ in range(pages):
        found = re.search(r'rel="next" href="(/staff/files\?[^"]+)"', session.get(url, timeout=30).text)
        url = base + found.group(1).replace("&amp;", "&")
    return url


def _middle_page_url(app: Flask, base: str) -> str:
    """The URL of the staff files page that starts halfway down the list, its cursor made the way
    the list makes its own (a page link there would take FILES / 50 pages of "Next page")."""
    from app.extensions import db
    from app.models import ExportFile
    from app.services.pages import list_pages
    from app.services.staff.staff_lists import LISTS

    spec = LISTS["files"].spec
    with app.test_request_context():
        middle = db.session.execute(
            select(ExportFile.requested_at, ExportFile.id)
            .order_by(ExportFile.requested_at.desc(), ExportFile.id.desc())
            .offset(FILES // 2)
            .limit(1)
        ).one()
        cursor = list_pages.encoded_cursor(spec, "newest", tuple(middle))
    return f"{base}/staff/files?{list_pages.CURSOR_PARAM}={cursor}"


def console_suite(app: Flask, scratch_root: Path) -> None:
    from bench.run_all import _emit, _target

    password = secrets.token_urlsafe(16)
    workspace_id, own_files = prepare(app, password)
    environment = {**os.environ, "SESSION_COOKIE_SECURE": "false", "WEB_CONCURRENCY": "2", "WEB_THREADS": "2"}
    port = free_port()
    environment["WEB_BIND"] = f"127.0.0.1:{port}"
    log = (scratch_root / "console-web.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
        cwd=PROJECT_ROOT,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        staff = _sign_in(base, STAFF_EMAIL, password)
        requester = _sign_in(base, REQUESTER_EMAIL, password)
        pages = {
            "staff_files": (staff, f"{base}/staff/files"),
            "staff_files_failed": (staff, f"{base}/staff/files?status=failed"),
            "staff_files_one_workspace": (staff, f"{base}/staff/files?workspace={workspace_id}"),
            "staff_files_page_100": (staff, _deep_page_url(staff, base, 100)),
            "staff_files_middle": (staff, _middle_page_url(app, base)),
            "workspace_files": (requester, f"{base}/w/{workspace_id}/files/"),
        }
        for name, (session, url) in pages.items():
            timings = _timings(session, url)
            p50, p95 = percentile(timings, 50), percentile(timings, 95)
            print(
                json.dumps(
                    {
                        "name": name,
                        "rows": FILES,
                        "requests": REQUESTS,
                        "p50_ms": round(p50, 1),
                        "p95_ms": round(p95, 1),
                        "max_ms": round(max(timings), 1),
                        "load_average": [round(load, 2) for load in os.getloadavg()],
                        **({"requester_files": own_files} if name == "workspace_files" else {}),
                    }
                ),
                flush=True,
            )
            _emit(_target(f"target_{name}_p95_ms", round(p95, 1), TARGET_P95_MS, "max"))
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
