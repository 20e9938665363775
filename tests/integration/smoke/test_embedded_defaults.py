"""Smoke test of the embedded defaults `make run` uses: a SQLite file, a storage folder, an outbox folder.

The schema, the demo seed, an RQ worker and the scheduler all run as the commands `make run`
starts, as subprocesses; the file is requested through the web app built for the same SQLite
database, and the stored object is read back from the storage folder.
"""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from flask.testing import FlaskClient
from sqlalchemy import select

from app.config import Settings
from app.domain.workspace_export.coverage import DECLARATIONS
from app.extensions import db
from app.models import CoverageDataset, CoverageVersion, ExportFile, SavedQuery, TimesheetEntry, Workspace
from app.services.demo.data_workspaces import DEMO_LOGINS, DEMO_WORKSPACE
from tests.fixtures.apps import app_in_testing_mode
from tests.fixtures.workers import (
    PROJECT_ROOT,
    SCHEDULER_COMMAND,
    WORKER_COMMAND,
    BackgroundProcess,
    is_alive,
    parent_of,
)

SEED_ROWS = 300
EXPORT_TIMEOUT_SECONDS = 60
COMMAND_TIMEOUT_SECONDS = 120
FLASK = [sys.executable, "-m", "flask", "--app", "wsgi"]
EXPORTED_COLUMNS = ["id", "person_name", "work_date", "hours", "note"]
T = TypeVar("T")


def run_command(command: list[str], env: dict[str, str]) -> None:
    finished = subprocess.run(
        command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS
    )
    assert finished.returncode == 0, f"{' '.join(command[1:])} failed:\n{finished.stdout}\n{finished.stderr}"


def settled_file(export_id: int, processes: list[BackgroundProcess]) -> ExportFile:
    """Poll the SQLite database until the file settles; fail with the processes' logs if it does not."""
    deadline = time.monotonic() + EXPORT_TIMEOUT_SECONDS
    while True:
        db.session.rollback()
        export = db.session.get(ExportFile, export_id, populate_existing=True)
        if export.is_settled:
            return export
        stopped = [p for p in processes if p.process.poll() is not None]
        if stopped or time.monotonic() > deadline:
            logs = "\n".join(f"--- {' '.join(p.process.args[1:])} ---\n{p.output()}" for p in processes)
            raise AssertionError(f"file {export_id} still {export.status}; stopped: {stopped}\n{logs}")
        time.sleep(0.2)


def request_csv_as_admin(client: FlaskClient, workspace_id: int) -> int:
    """Sign in as the demo administrator, save a timesheet query and request its CSV; returns the file's id."""
    admin_email, admin_password, _ = next(login for login in DEMO_LOGINS if login[0].startswith("admin@"))
    assert client.post("/login", data={"email": admin_email, "password": admin_password}).status_code == 302
    saved = client.post(
        f"/w/{workspace_id}/queries/new",
        data={
            "action": "save",
            "name": "Smoke timesheet",
            "dataset": "timesheet_entries",
            "columns": EXPORTED_COLUMNS,
            "column_order": EXPORTED_COLUMNS,
            "sort-0-column": "id",
            "sort-0-direction": "asc",
        },
    )
    assert saved.status_code == 302, saved.get_data(as_text=True)
    query_id = db.session.scalar(select(SavedQuery.id).where(SavedQuery.name == "Smoke timesheet"))
    requested = client.post(f"/w/{workspace_id}/queries/{query_id}/files", data={"format": "csv", "heading": "names"})
    assert requested.status_code == 302, requested.get_data(as_text=True)
    return int(re.search(r"/files/(\d+)$", requested.headers["Location"]).group(1))


def test_embedded_defaults_make_a_whole_csv_export(test_environment, tmp_path):
    """With SQLite, a storage folder and an outbox folder, a requested CSV is made, stored and downloadable."""
    storage_root = tmp_path / "storage"
    embedded = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'rhythm.db'}",
        "STORAGE_URL": storage_root.as_uri(),
        "MAIL_URL": (tmp_path / "outbox").as_uri(),
        "REDIS_URL": test_environment["REDIS_URL"],
        "EXPORT_QUEUE": f"smoke-{uuid.uuid4().hex}",
    }
    env = {**os.environ, **embedded}
    run_command([*FLASK, "db", "upgrade"], env)
    run_command([*FLASK, "seed-demo", "--rows", str(SEED_ROWS)], env)

    processes: list[BackgroundProcess] = []
    try:
        processes.append(BackgroundProcess(WORKER_COMMAND, env, tmp_path / "worker.log"))
        processes.append(BackgroundProcess(SCHEDULER_COMMAND, env, tmp_path / "scheduler.log"))
        web = app_in_testing_mode(Settings.from_environment(env))
        assert web.config["SQLALCHEMY_DATABASE_URI"] == embedded["DATABASE_URL"]
        client = web.test_client()
        with web.app_context():
            workspace_id = db.session.scalar(select(Workspace.id).where(Workspace.name == DEMO_WORKSPACE))
            table = TimesheetEntry.__table__
            rows = db.session.scalars(
                select(table.c.id).where(table.c.workspace_id == workspace_id).order_by(table.c.id)
            )
            expected_ids = [str(entry_id) for entry_id in rows]
            assert len(expected_ids) >= SEED_ROWS

            export_id = request_csv_as_admin(client, workspace_id)
            export = settled_file(export_id, processes)
            assert (export.status, export.failure_code, export.failure_detail) == ("succeeded", None, None)
            stored = storage_root / export.storage_key
            assert stored.is_file(), f"no stored object at {stored}"
            content = stored.read_bytes()
            records = list(csv.reader(io.StringIO(content.decode("utf-8-sig"), newline="")))
            assert records[0] == EXPORTED_COLUMNS
            assert [record[0] for record in records[1:]] == expected_ids
            assert export.row_count == len(expected_ids)
            assert export.size_bytes == len(content)

            downloaded = client.get(f"/w/{workspace_id}/files/{export_id}/download")
            assert downloaded.status_code == 200
            assert downloaded.data == content
    finally:
        for process in processes:
            process.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def eventually(predicate: Callable[[], T], timeout: float, what: str, process: BackgroundProcess) -> T:
    """Poll until `predicate()` is truthy; fail with the process's output after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout} s waiting for {what}\n{process.output()}")
        time.sleep(0.2)
    return value


def worker_processes(supervisor: BackgroundProcess) -> list[int]:
    """The RQ workers the supervisor started itself (a work-horse is its worker's child, not the supervisor's)."""
    found = []
    for pid in supervisor.descendants():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # ended while we looked
        if b"jobs.worker" in command and is_alive(pid) and parent_of(pid) == supervisor.pid:
            found.append(pid)
    return found


def test_serve_all_restarts_a_killed_worker_and_files_are_still_produced(test_environment, tmp_path):
    """`flask serve-all` on the embedded defaults: SIGKILL its worker, it says so, restarts it, and a CSV is made."""
    storage_root = tmp_path / "storage"
    embedded = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'rhythm.db'}",
        "STORAGE_URL": storage_root.as_uri(),
        "MAIL_URL": (tmp_path / "outbox").as_uri(),
        "REDIS_URL": test_environment["REDIS_URL"],
        "EXPORT_QUEUE": f"smoke-{uuid.uuid4().hex}",
        "SEED_ROWS": str(SEED_ROWS),
        # Kept in this test's folder, not the project's instance folder.
        "DESTINATIONS_ROOT": str(tmp_path / "destinations"),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
    }
    (tmp_path / "metrics").mkdir()
    serve_all = [*FLASK, "serve-all", "--port", str(free_port())]
    supervisor = BackgroundProcess(serve_all, {**os.environ, **embedded}, tmp_path / "serve-all.log")
    try:
        started = eventually(lambda: worker_processes(supervisor), COMMAND_TIMEOUT_SECONDS, "a worker", supervisor)
        os.kill(started[0], signal.SIGKILL)

        eventually(
            lambda: "worker was killed by SIGKILL; restarting it in 1 s." in supervisor.output(),
            30,
            "the supervisor to report the dead worker",
            supervisor,
        )
        restarted = eventually(
            lambda: [pid for pid in worker_processes(supervisor) if pid != started[0]],
            30,
            "a new worker",
            supervisor,
        )
        assert f"worker restarted (pid {restarted[0]})." in supervisor.output()
        assert supervisor.process.poll() is None

        web = app_in_testing_mode(Settings.from_environment({**os.environ, **embedded}))
        with web.app_context():
            workspace_id = db.session.scalar(select(Workspace.id).where(Workspace.name == DEMO_WORKSPACE))
            export_id = request_csv_as_admin(web.test_client(), workspace_id)
            export = settled_file(export_id, [supervisor])
            assert (export.status, export.failure_detail) == ("succeeded", None)
            assert (storage_root / export.storage_key).is_file()
            # Start-up reconciled the coverage registry, so the demo has one.
            assert db.session.scalars(select(CoverageVersion.version)).all() == [1]
            assert len(db.session.scalars(select(CoverageDataset)).all()) == len(DECLARATIONS)
        assert "Coverage registry is now version 1." in supervisor.output()
        # The demo workspace's first package was delivered to its directory destination.
        assert "Demo workspace export set up; its first package: succeeded." in supervisor.output()
        assert list((tmp_path / "destinations").glob("*/*/workspace-*/*/manifest.json"))
    finally:
        supervisor.stop()
