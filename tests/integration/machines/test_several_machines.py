"""README's "Adding machines", proved: web, two workers and two schedulers started as separate
machines would be (each its own working directory and instance folder, nothing shared on local
disk) against PostgreSQL, Redis, S3 (moto's server) and SMTP (aiosmtpd) complete a person's file,
a schedule run to three recipients and a workspace package delivered to a customer's bucket,
while one worker is SIGKILLed in the middle of a job.

To hold the workers inside their jobs, the test takes an exclusive lock on the timesheet table
(every one of the three reads it). The first worker takes the package alone; once the second is
inside another job too, the first is killed and the lock let go. The schedulers' watchdogs find
the killed worker's lapsed lease and redeliver the package; the second worker completes the rest.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from sqlalchemy import func, select

from app.extensions import db
from app.models import ExportExecution, ExportFile
from app.models.export_execution import ExecutionTrigger
from app.models.export_package import ExportPackage
from app.models.package_delivery import ExportDelivery
from app.models.schedule import Schedule, ScheduleRecipient, ScheduleRun
from app.models.types import utcnow
from app.services.workspace_export.execution_admission import admit
from tests import factories
from tests.fixtures.apps import configuring_fixture
from tests.fixtures.workers import (
    PROJECT_ROOT,
    TIMESHEET_TABLE,
    BackgroundProcess,
    table_lock_waiters,
    timesheet_locked,
    wait_for,
)

# Short leases so that the killed worker's job is redelivered within the test's patience.
LEASE_SECONDS = "6"
CSRF_TOKEN = re.compile(r'"X-CSRFToken": "([^"]+)"')
SETTLE_SECONDS = 240


@dataclass
class Machines:
    """Processes each started in a folder of its own, as on a machine of its own."""

    root: Path
    environment: dict[str, str]
    started: list[BackgroundProcess] = field(default_factory=list)

    def start(self, name: str, command: list[str], **overrides: str) -> BackgroundProcess:
        folder = self.root / name
        (folder / "instance").mkdir(parents=True)
        environment = {
            **self.environment,
            # The code is the project's; everything a machine keeps is in its own folder.
            "PYTHONPATH": str(PROJECT_ROOT),
            "INSTANCE_PATH": str(folder / "instance"),
            "PROMETHEUS_MULTIPROC_DIR": "",
            **overrides,
        }
        process = BackgroundProcess(command, environment, folder / "output.log", cwd=folder)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.started:
            process.stop()
            print(f"--- {process.log_path.parent.name} (pid {process.pid}) ---\n{process.output()}")


# This process's app is configured as the machines are: it reads the same bucket.
@configuring_fixture(lambda environment: environment)
def machine_environment(s3_bucket, s3_account, smtp_server) -> dict[str, str]:
    endpoint, bucket = s3_bucket
    return {
        "STORAGE_URL": f"s3://{bucket}/product",
        "S3_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": s3_account.access_key_id,
        "AWS_SECRET_ACCESS_KEY": s3_account.secret,
        "STORAGE_PART_SIZE": "1024",
        "MAIL_URL": f"smtp://{smtp_server.host}:{smtp_server.port}",
        "LEASE_SECONDS": LEASE_SECONDS,
    }


@pytest.fixture
def machines(app, tmp_path, machine_environment):
    group = Machines(tmp_path / "machines", {**os.environ, **machine_environment})
    yield group
    group.stop_all()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _signed_in(base: str, email: str) -> tuple[requests.Session, str]:
    session = requests.Session()
    deadline = time.monotonic() + 60
    while True:
        try:
            page = session.get(f"{base}/login", timeout=30)
            break
        except requests.ConnectionError:
            assert time.monotonic() < deadline, "the web machine did not answer within a minute"
            time.sleep(0.2)
    match = CSRF_TOKEN.search(page.text)
    assert match is not None
    token = match.group(1)
    answer = session.post(
        f"{base}/login",
        data={"email": email, "password": factories.PASSWORD, "csrf_token": token},
        allow_redirects=False,
        timeout=10,
    )
    assert answer.status_code == 302
    return session, token


def _due_schedule(world, query) -> Schedule:
    """Due a minute ago, to the owner, a colleague and an outside address."""
    due = utcnow().replace(second=0, microsecond=0) - timedelta(minutes=1)
    schedule = factories.make_schedule(
        query,
        world.admin,
        timetable={"kind": "hourly", "minute": due.minute, "zone": "UTC"},
        next_occurrence_at=due,
        send_condition="always",
    )
    # The factory's schedule sends to its owner already.
    schedule.recipients += [
        ScheduleRecipient(person_id=world.member.id, address_key=f"person:{world.member.id}", position=1),
        ScheduleRecipient(email="outside@example.org", address_key="outside@example.org", position=2),
    ]
    db.session.commit()
    return schedule


def _holder_pid(execution_id: int) -> int | None:
    """The process id in the name of the worker holding the execution (exports-<host>-<pid>)."""
    holder = db.session.scalar(select(ExportExecution.lease_holder).where(ExportExecution.id == execution_id))
    return int(holder.rsplit("-", 1)[1]) if holder else None


def _schedule_messages(smtp_server, schedule_name: str) -> list[str]:
    return sorted(
        address
        for arrived in smtp_server.messages
        if schedule_name in str(arrived.message["Subject"])
        for address in arrived.recipients
    )


def test_a_file_a_run_and_a_package_complete_across_machines_with_a_worker_killed_mid_job(
    world, machines, smtp_server, s3_account, s3_bucket, s3_destination
):
    _, bucket = s3_bucket
    query = factories.make_query(world.workspace, world.admin)
    schedule = _due_schedule(world, query)
    factories.make_export_settings(world.workspace)
    s3_destination(world.workspace, path="rhythm/exports")
    port = _free_port()
    python = sys.executable
    machines.start(
        "web",
        [python, "-m", "gunicorn", "--workers", "1", "--threads", "4", "--bind", f"127.0.0.1:{port}", "wsgi:app"],
        SESSION_COOKIE_SECURE="false",
    )
    session, token = _signed_in(f"http://127.0.0.1:{port}", world.admin.email)

    with timesheet_locked():
        # The package first, on a worker of its own: the job the test kills is the longest one.
        execution = admit(world.workspace.id, world.admin, ExecutionTrigger.MANUAL)
        doomed = machines.start("worker-1", [python, "-m", "jobs.worker"])
        wait_for(
            lambda: _holder_pid(execution.id) == doomed.pid and table_lock_waiters(TIMESHEET_TABLE) == 1,
            timeout=120,
            what="the first worker inside the package's snapshot",
        )
        for number in (1, 2):
            machines.start(f"scheduler-{number}", [python, "-m", "flask", "--app", "wsgi", "scheduler"])
        requested = session.post(
            f"http://127.0.0.1:{port}/w/{world.workspace.id}/queries/{query.id}/files",
            data={"format": "csv", "heading": "names", "csrf_token": token},
            allow_redirects=False,
            timeout=30,
        )
        assert requested.status_code == 302
        machines.start("worker-2", [python, "-m", "jobs.worker"])
        wait_for(lambda: table_lock_waiters(TIMESHEET_TABLE) == 2, timeout=120, what="the second worker in a job")
        doomed.kill()

    def everything_settled() -> bool:
        file = db.session.scalars(select(ExportFile).where(ExportFile.schedule_id.is_(None))).one()
        run = db.session.scalars(select(ScheduleRun)).one_or_none()
        settled = db.session.get_one(ExportExecution, execution.id)
        deliveries = db.session.scalars(select(ExportDelivery)).all()
        return (
            file.status == "succeeded"
            and run is not None
            and run.status == "succeeded"
            and settled.status == "succeeded"
            and len(deliveries) == 1
            and deliveries[0].status == "delivered"
        )

    wait_for(everything_settled, timeout=SETTLE_SECONDS, what="the file, the run and the package to complete")

    assert db.session.scalar(select(func.count()).select_from(ScheduleRun)) == 1  # one run for the occurrence
    assert _schedule_messages(smtp_server, schedule.name) == sorted(
        [world.admin.email, world.member.email, "outside@example.org"]
    )
    package = db.session.scalars(select(ExportPackage)).one()
    assert package.status == "available"
    delivered = s3_account.client.list_objects_v2(Bucket=bucket, Prefix="rhythm/exports/").get("Contents", [])
    assert any(item["Key"].endswith("/manifest.json") for item in delivered)
