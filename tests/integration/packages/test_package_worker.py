"""Package production through real rq workers: the round trip into S3, the cutoff, fencing, a killed worker.

Jobs are enqueued by hand on the export queue under the RQ function path the dispatcher uses
("jobs.package_execution.run"). To stop a job at a known point the test holds a lock its next
statement needs (tests/fixtures/workers.py), then changes the world and releases it.
"""

from __future__ import annotations

from datetime import timedelta

from flask import current_app
from rq.job import Job
from sqlalchemy import select, text

from app.domain import export_execution
from app.extensions import db
from app.models import ExportDelivery, ExportExecution, ExportJobEvent, ExportNotice, ExportVolume
from app.models.types import utcnow
from app.services.execution_watchdog import settle_stalled_executions
from app.services.package_production import run_execution
from app.services.queue import WorkPriority, work_queue
from tests import factories
from tests.fixtures.s3 import PART_SIZE, PREFIX
from tests.fixtures.workers import (
    a_query_waits_for_the_timesheet_lock,
    pending_uploads,
    timesheet_locked,
    wait_for,
)
from tests.integration.packages.package_reading import (
    ALL_DATASETS,
    add_timesheet_rows,
    database_rows,
    fill_every_dataset,
    package_of,
    read_package,
)

JOB = "jobs.package_execution.run"
SHORT_LEASE_SECONDS = 2


def _execution_row(execution_id: int) -> ExportExecution:
    db.session.rollback()
    return db.session.get(ExportExecution, execution_id, populate_existing=True)


def _settled(execution_id: int) -> bool:
    return _execution_row(execution_id).status in ("succeeded", "failed")


def _start(workspace, **snapshot) -> ExportExecution:
    execution, _ = _start_job(workspace, **snapshot)
    return execution


def _start_job(workspace, **snapshot) -> tuple[ExportExecution, Job]:
    execution = factories.make_execution(
        workspace, settings_snapshot=factories.settings_snapshot(datasets=ALL_DATASETS, **snapshot)
    )
    return execution, work_queue(WorkPriority.BULK).enqueue(JOB, execution.id)


def test_a_worker_produces_a_package_into_s3_that_round_trips(
    use_storage, s3_bucket, s3_client, start_worker, app_context, tmp_path
):
    """Every volume unzips, every checksum matches the manifest, every row equals the database's; the
    package is delivered to the workspace's destination and its administrator is told."""
    endpoint, bucket = s3_bucket
    destinations_root = tmp_path / "destinations"
    destinations_root.mkdir()
    storage = use_storage(
        STORAGE_URL=f"s3://{bucket}/{PREFIX}",
        S3_ENDPOINT_URL=endpoint,
        STORAGE_PART_SIZE=str(PART_SIZE),
        DESTINATIONS_ROOT=str(destinations_root),
    )
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin")
    destination = factories.make_destination(workspace)
    fill_every_dataset(workspace, timesheet_rows=20_000)
    execution = _start(workspace, volume_size_bytes=400 * 1024)
    start_worker()

    wait_for(lambda: _settled(execution.id), timeout=120, what="the execution to settle")

    done = _execution_row(execution.id)
    assert done.status == "succeeded", done.failure_detail
    package = package_of(execution.id)
    read = read_package(storage, package)
    for dataset in ALL_DATASETS:
        assert read.csv_rows(dataset) == database_rows(workspace.id, dataset), dataset
    assert len(read.dataset("timesheet_entries")["volumes"]) > 1
    assert (done.rows_written, done.rows_expected, done.volumes_count, done.bytes_written) == (
        package.row_count,
        package.row_count,
        package.volumes_count,
        package.size_bytes,
    )
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    phases = db.session.scalars(
        select(ExportJobEvent.phase)
        .where(ExportJobEvent.execution_id == execution.id, ExportJobEvent.kind == "phase_finished")
        .order_by(ExportJobEvent.id)
    ).all()
    assert phases == ["snapshot", "writing", "uploading", "delivering", "notifying"]
    delivery = db.session.scalars(select(ExportDelivery).where(ExportDelivery.package_id == package.id)).one()
    assert (delivery.destination_id, delivery.status) == (destination.id, "delivered"), delivery.failure_summary
    delivered = sorted(p.name for p in destinations_root.rglob("*") if p.is_file())
    assert "manifest.json" in delivered and len(delivered) == package.volumes_count + 1
    notice = db.session.scalars(select(ExportNotice).where(ExportNotice.subject_id == package.id)).one()
    assert (notice.kind, notice.person_id) == ("package_ready", admin.person_id)


def test_rows_committed_during_the_export_are_absent_from_the_package(isolated_storage, start_worker, app_context):
    """The worker took its snapshot and waits on a lock; rows added then are not in the package."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=100)
    before = {dataset: database_rows(workspace.id, dataset) for dataset in ALL_DATASETS}
    with timesheet_locked():
        execution = _start(workspace)
        start_worker()
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the worker to count inside its snapshot")
        assert _execution_row(execution.id).phase == "snapshot"
        inserted_at = utcnow()
        # Rows of every dataset the worker has not read yet, committed after its snapshot.
        team = factories.make_team(workspace, name="Added during the export")
        person = factories.make_team_member(team)
        factories.make_shift(person)
        factories.make_time_off(person)
    add_timesheet_rows(workspace, person, 10)

    wait_for(lambda: _settled(execution.id), timeout=60, what="the execution to settle")

    done = _execution_row(execution.id)
    assert done.status == "succeeded", done.failure_detail
    assert done.cutoff_at < inserted_at
    read = read_package(isolated_storage, package_of(execution.id))
    for dataset in ALL_DATASETS:
        assert read.csv_rows(dataset) == before[dataset], dataset
        assert len(database_rows(workspace.id, dataset)) > len(before[dataset])


def test_a_stale_attempt_stops_without_a_package_and_removes_its_objects(isolated_storage, start_worker, app_context):
    """The watchdog or a redelivery took the execution over while the worker waited: it changes nothing."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    with timesheet_locked():
        execution, job = _start_job(workspace)
        start_worker()
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the worker to count inside its snapshot")
        newer = export_execution.start_attempt(execution.id, "another worker", utcnow() + timedelta(minutes=5))

    wait_for(lambda: job.get_status(refresh=True) == "finished", timeout=60, what="the stale job to end")
    assert job.return_value() == "superseded"
    row = _execution_row(execution.id)
    assert (row.status, row.attempt_count, row.rows_written) == ("running", newer, 0)
    assert package_of(execution.id) is None
    assert isolated_storage.list_keys("packages/") == []
    assert pending_uploads(isolated_storage) == []


def test_a_stale_attempt_cannot_make_its_package_available(isolated_storage, app_context, monkeypatch):
    """Taken over between storing its manifest and publishing: the package is never made available."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    execution = factories.make_execution(workspace)
    store_manifest = isolated_storage.put_bytes

    def manifest_then_takeover(key: str, data: bytes) -> None:
        store_manifest(key, data)
        export_execution.start_attempt(execution.id, "another worker", utcnow() + timedelta(minutes=5))

    monkeypatch.setattr(isolated_storage, "put_bytes", manifest_then_takeover)

    assert run_execution(execution.id) == "superseded"

    assert package_of(execution.id) is None
    assert isolated_storage.list_keys("packages/") == []
    assert {v.status for v in db.session.scalars(select(ExportVolume))} == {"discarded"}


def test_a_worker_killed_mid_package_settles_stalled_and_leaves_nothing(
    isolated_storage, start_worker, hold_lock, app_context
):
    """SIGKILL with a volume's upload open: the watchdog settles `stalled`, aborts it, and the workspace
    can export again."""
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin")
    fill_every_dataset(workspace, timesheet_rows=500)
    lock = hold_lock("LOCK TABLE data_export_parts IN ACCESS EXCLUSIVE MODE")
    execution = _start(workspace)
    worker = start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lock.waiters, timeout=60, what="the worker to record its first part")
    volume = db.session.scalars(select(ExportVolume).where(ExportVolume.execution_id == execution.id)).one()
    assert (volume.status, bool(volume.upload_id)) == ("uploading", True)
    assert pending_uploads(isolated_storage) != []
    worker.kill()
    lock.release()

    assert settle_stalled_executions(utcnow() + timedelta(seconds=SHORT_LEASE_SECONDS + 1)) == 1

    row = _execution_row(execution.id)
    assert (row.status, row.failure_code) == ("failed", "stalled")
    assert "worker" in row.failure_detail
    assert pending_uploads(isolated_storage) == []
    assert isolated_storage.list_keys("packages/") == []
    assert db.session.scalars(select(ExportVolume.status)).all() == ["discarded"]
    notice = db.session.scalars(select(ExportNotice).where(ExportNotice.subject_id == execution.id)).one()
    assert (notice.kind, notice.subject_type, notice.person_id) == ("execution_failed", "execution", admin.person_id)
    assert factories.make_execution(workspace).status == "queued"


def test_a_restarted_attempt_removes_what_the_killed_one_left_and_completes(
    isolated_storage, start_worker, hold_lock, app_context
):
    """The first worker dies with a volume stored and another open; the next attempt aborts and deletes
    them, marks them discarded, and its package is the only thing under the execution."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=500)
    execution = _start(workspace)
    lock = hold_lock("LOCK TABLE data_export_parts IN ACCESS EXCLUSIVE MODE")
    worker = start_worker()
    wait_for(lock.waiters, timeout=60, what="the worker to record its first part")
    worker.kill()
    lock.release()
    db.session.execute(
        text("UPDATE data_export_executions SET lease_expires_at = NULL WHERE id = :id"), {"id": execution.id}
    )
    db.session.commit()

    assert run_execution(execution.id) == "succeeded"

    package = package_of(execution.id)
    assert package.prefix.endswith("/a2/")
    assert all(key.startswith(package.prefix) for key in isolated_storage.list_keys("packages/"))
    assert pending_uploads(isolated_storage) == []
    first = db.session.scalars(select(ExportVolume.status).where(ExportVolume.attempt == 1)).all()
    assert first == ["discarded"]
    read_package(isolated_storage, package)


def test_an_execution_without_progress_for_too_long_settles_stalled(app_context, isolated_storage):
    """A live but hung attempt (its lease renewed) is settled once it made no progress for the stall time."""
    workspace = factories.make_workspace()
    execution = factories.make_execution(workspace)
    export_execution.start_attempt(execution.id, "hung worker", utcnow() + timedelta(days=1))
    stall = current_app.config["SETTINGS"].package_stall_seconds

    assert settle_stalled_executions(utcnow() + timedelta(seconds=stall // 2)) == 0
    assert settle_stalled_executions(utcnow() + timedelta(seconds=stall + 1)) == 1

    row = _execution_row(execution.id)
    assert (row.status, row.failure_code) == ("failed", "stalled")
    assert "no progress" in row.failure_detail


def test_a_worker_killed_mid_package_leaves_no_multipart_upload_or_object_in_s3(
    use_storage, s3_bucket, s3_client, start_worker, hold_lock, app_context
):
    """The same SIGKILL against moto's S3: the watchdog aborts the open multipart upload there too."""
    endpoint, bucket = s3_bucket
    environment = {
        "STORAGE_URL": f"s3://{bucket}/{PREFIX}",
        "S3_ENDPOINT_URL": endpoint,
        "STORAGE_PART_SIZE": str(PART_SIZE),
    }
    use_storage(**environment)
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=500)
    lock = hold_lock("LOCK TABLE data_export_parts IN ACCESS EXCLUSIVE MODE")
    execution = _start(workspace)
    worker = start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS), **environment)
    wait_for(lock.waiters, timeout=60, what="the worker to record its first part")
    assert len(s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])) == 1
    worker.kill()
    lock.release()

    assert settle_stalled_executions(utcnow() + timedelta(seconds=SHORT_LEASE_SECONDS + 1)) == 1

    assert _execution_row(execution.id).failure_code == "stalled"
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    assert s3_client.list_objects_v2(Bucket=bucket, Prefix=f"{PREFIX}/packages/").get("Contents", []) == []
