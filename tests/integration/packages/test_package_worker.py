"""Package production through real rq workers: the round trip into S3, the cutoff, fencing, a killed worker.

Jobs are enqueued by hand on the export queue under the RQ function path the dispatcher uses
("jobs.package_execution.run"). To stop a job at a known point the test holds a lock its next
statement needs (tests/fixtures/workers.py), then changes the world and releases it.
"""

from __future__ import annotations

import os
import signal
from collections import defaultdict
from datetime import timedelta

import pytest
from flask import current_app
from rq.job import Job
from sqlalchemy import select, text

from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models import ExportDelivery, ExportExecution, ExportJobEvent, ExportNotice, ExportVolume
from app.models.types import utcnow
from app.services.work import claims
from app.services.work.engine import redeliver_lapsed
from app.services.work.kinds import EXECUTIONS
from app.services.work.queue import WorkPriority, work_queue
from app.services.work.work_kind import LOST_AFTER
from app.services.workspace_export import package_delivery, package_delivery_progress
from app.services.workspace_export.package_cleanup import remove_attempt_leftovers
from app.services.workspace_export.package_keys import checksums_key
from app.services.workspace_export.package_production import run_execution
from app.storage import get_storage
from tests import factories
from tests.fixtures.s3 import PREFIX
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


def _after_a_dead_holders_lease(execution_id: int):
    """Once the killed holder's lease really lapsed, a clock past the dispatch's time in flight too."""
    wait_for(
        lambda: _execution_row(execution_id).lease_expires_at < utcnow(), timeout=30, what="the dead holder's lease"
    )
    return utcnow() + LOST_AFTER + timedelta(seconds=1)


def _past_the_lease():
    """A clock at which the lease an attempt of this process (or a worker with default settings) took has lapsed."""
    return utcnow() + timedelta(seconds=current_app.config["SETTINGS"].lease_seconds + 1)


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
    app_on_s3, destinations_root, s3_client, start_worker, app_context
):
    """Every volume unzips, every checksum matches the manifest, every row equals the database's; the
    package is delivered to the workspace's destination and its administrator is told."""
    storage, bucket = app_on_s3, app_on_s3.bucket
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
    assert {"manifest.json", "SHA256SUMS"} <= set(delivered) and len(delivered) == package.volumes_count + 2
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
        # The worker froze longer than its lease: the redelivered attempt may take the execution over.
        later = _past_the_lease()
        newer = export_execution.start_attempt(execution.id, "another worker", later + timedelta(minutes=5), now=later)

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
        later = _past_the_lease()  # the attempt froze longer than its lease
        export_execution.start_attempt(execution.id, "another worker", later + timedelta(minutes=5), now=later)

    monkeypatch.setattr(isolated_storage, "put_bytes", manifest_then_takeover)

    assert run_execution(execution.id) == "superseded"

    assert package_of(execution.id) is None
    assert isolated_storage.list_keys("packages/") == []
    assert {v.status for v in db.session.scalars(select(ExportVolume))} == {"discarded"}


def test_a_worker_killed_mid_package_is_redelivered_and_the_execution_succeeds_complete(
    isolated_storage, start_worker, hold_lock, app_context
):
    """SIGKILL with a volume's upload open: once the lease lapsed the watchdog dispatches the execution
    again; the next attempt removes what the dead one left and the execution succeeds with every row."""
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin")
    fill_every_dataset(workspace, timesheet_rows=500)
    lock = hold_lock("LOCK TABLE data_export_parts IN ACCESS EXCLUSIVE MODE")
    execution = factories.make_execution(
        workspace, settings_snapshot=factories.settings_snapshot(datasets=ALL_DATASETS)
    )
    assert claims.dispatch(EXECUTIONS, execution.id, None)
    first = start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lock.waiters, timeout=60, what="the worker to record its first part")
    assert pending_uploads(isolated_storage) != []
    first.kill()
    lock.release()
    start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))

    assert redeliver_lapsed(_after_a_dead_holders_lease(execution.id)) == 1

    wait_for(lambda: _settled(execution.id), timeout=120, what="the redelivered execution to settle")
    done = _execution_row(execution.id)
    assert (done.status, done.attempt_count) == ("succeeded", 2), done.failure_detail
    package = package_of(execution.id)
    assert package.prefix.endswith("/a2/")
    read = read_package(isolated_storage, package)
    for dataset in ALL_DATASETS:
        assert read.csv_rows(dataset) == database_rows(workspace.id, dataset), dataset
    assert all(key.startswith(package.prefix) for key in isolated_storage.list_keys("packages/"))
    assert pending_uploads(isolated_storage) == []
    assert db.session.scalars(select(ExportVolume.status).where(ExportVolume.attempt == 1)).all() == ["discarded"]
    notices = db.session.execute(select(ExportNotice.kind, ExportNotice.person_id)).all()
    assert notices == [("package_ready", admin.person_id)]


def test_a_worker_killed_at_the_last_attempt_is_given_up_leaving_nothing_and_telling_the_admins(
    isolated_storage, start_worker, hold_lock, app_context
):
    """Out of attempts: the watchdog settles `stalled` (the platform's failure, said so), aborts the open
    upload, removes the objects and sends the failure notice; the workspace can export again."""
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin")
    fill_every_dataset(workspace, timesheet_rows=500)
    lock = hold_lock("LOCK TABLE data_export_parts IN ACCESS EXCLUSIVE MODE")
    execution = _start(workspace)
    worker = start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lock.waiters, timeout=60, what="the worker to record its first part")
    worker.kill()
    lock.release()
    # As if the earlier attempts had died the same way: this one was the last allowed.
    db.session.execute(
        text("UPDATE data_export_executions SET attempt_count = :last WHERE id = :id"),
        {"last": EXECUTIONS.retries.max_attempts, "id": execution.id},
    )
    db.session.commit()

    assert redeliver_lapsed(_after_a_dead_holders_lease(execution.id)) == 1

    row = _execution_row(execution.id)
    assert (row.status, row.failure_code) == ("failed", "stalled")
    assert f"started {EXECUTIONS.retries.max_attempts} times" in row.failure_detail
    assert "does not count against" in row.failure_detail
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


def test_a_live_attempt_is_never_failed_or_restarted_however_long_it_reports_no_progress(app_context, isolated_storage):
    """A slow delivery or a long count renews its lease without reporting progress: a day later the
    watchdog still leaves it running at its attempt."""
    workspace = factories.make_workspace()
    execution = factories.make_execution(workspace)
    assert claims.dispatch(EXECUTIONS, execution.id, None)
    export_execution.start_attempt(execution.id, "slow worker", utcnow() + timedelta(days=2))

    assert redeliver_lapsed(utcnow() + timedelta(days=1)) == 0

    row = _execution_row(execution.id)
    assert (row.status, row.attempt_count, row.failure_code) == ("running", 1, None)


def test_a_second_job_while_the_attempt_is_alive_starts_nothing_and_its_published_package_stays_whole(
    isolated_storage, app_context, monkeypatch
):
    """A redelivery or a requeue arrives while the attempt delivers its available package: the live lease
    refuses the new attempt, so nothing of the package is removed and the first attempt succeeds."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    execution = factories.make_execution(workspace)
    deliver = package_delivery.deliver_package
    second_job = []

    def a_second_job_arrives(package_id: int, progress=None) -> None:
        second_job.append(run_execution(execution.id))
        deliver(package_id, progress)

    monkeypatch.setattr(package_delivery, "deliver_package", a_second_job_arrives)

    assert run_execution(execution.id) == "succeeded"

    assert second_job == ["not_started"]
    assert _execution_row(execution.id).attempt_count == 1
    read_package(isolated_storage, package_of(execution.id))


def test_leftover_cleanup_never_removes_the_objects_of_a_published_package(isolated_storage, app_context):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    execution = factories.make_execution(workspace)
    assert run_execution(execution.id) == "succeeded"
    stored = isolated_storage.list_keys("packages/")

    assert remove_attempt_leftovers(isolated_storage, workspace.id, execution.id, [1]) == 0

    assert isolated_storage.list_keys("packages/") == stored
    assert set(db.session.scalars(select(ExportVolume.status))) == {"complete"}
    read_package(isolated_storage, package_of(execution.id))


class _WorkerDied(BaseException):
    """What the process's sudden end looks like to the code after it: nothing below runs."""


def _publish_then_die_delivering(execution_id: int, monkeypatch) -> None:
    """Run the execution until its package is published, then end it as a dying worker would."""

    def worker_dies(package_id: int, progress=None) -> None:
        raise _WorkerDied()

    with monkeypatch.context() as patched, pytest.raises(_WorkerDied):
        patched.setattr(package_delivery, "deliver_package", worker_dies)
        run_execution(execution_id)


def test_an_attempt_redelivered_after_its_package_was_published_delivers_that_package(
    isolated_storage, destinations_root, app_context, monkeypatch
):
    """The worker died in the delivering phase: the next attempt keeps the available package, produces
    nothing again, delivers it and tells the administrators it is ready."""
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin")
    factories.make_destination(workspace)
    fill_every_dataset(workspace)
    execution = factories.make_execution(workspace)

    _publish_then_die_delivering(execution.id, monkeypatch)
    published = package_of(execution.id)
    db.session.execute(
        text("UPDATE data_export_executions SET lease_expires_at = NULL WHERE id = :id"), {"id": execution.id}
    )
    db.session.commit()

    assert run_execution(execution.id) == "succeeded"

    package = package_of(execution.id)
    assert (package.id, package.prefix, _execution_row(execution.id).attempt_count) == (
        published.id,
        published.prefix,
        2,
    )
    read_package(isolated_storage, package)
    assert db.session.scalars(select(ExportDelivery.status)).all() == ["delivered"]
    notices = db.session.execute(select(ExportNotice.kind, ExportNotice.person_id)).all()
    assert notices == [("package_ready", admin.person_id)]


def test_an_execution_given_up_after_publishing_keeps_its_package_whole(isolated_storage, app_context, monkeypatch):
    """Its last attempt died while delivering: the watchdog fails the execution, says the package is kept,
    and removes none of the package's objects."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    execution = factories.make_execution(workspace)

    _publish_then_die_delivering(execution.id, monkeypatch)
    db.session.execute(
        text("UPDATE data_export_executions SET attempt_count = :last, lease_expires_at = NULL WHERE id = :id"),
        {"last": EXECUTIONS.retries.max_attempts, "id": execution.id},
    )
    db.session.commit()

    assert redeliver_lapsed(utcnow() + LOST_AFTER) == 1

    row = _execution_row(execution.id)
    assert (row.status, row.failure_code) == ("failed", "stalled")
    assert "package had been made available and is kept" in row.failure_detail
    package = package_of(execution.id)
    assert package.status == "available"
    read_package(isolated_storage, package)


def test_the_delivering_phase_reports_the_bytes_copied_to_each_destination(
    isolated_storage, destinations_root, app_context, monkeypatch
):
    """The execution's event log shows each destination's copy moving, up to the whole package."""
    monkeypatch.setattr(package_delivery_progress, "DELIVERY_EVENT_SECONDS", 0.0)
    workspace = factories.make_workspace()
    destinations = [factories.make_destination(workspace), factories.make_destination(workspace)]
    fill_every_dataset(workspace, timesheet_rows=5_000)
    execution = factories.make_execution(
        workspace, settings_snapshot=factories.settings_snapshot(datasets=ALL_DATASETS, volume_size_bytes=400 * 1024)
    )

    assert run_execution(execution.id) == "succeeded"

    package = package_of(execution.id)
    checksums_size = get_storage().size(checksums_key(package.prefix))
    copied = defaultdict(list)
    for event in db.session.scalars(
        select(ExportJobEvent)
        .where(ExportJobEvent.kind == "counts", ExportJobEvent.phase == "delivering")
        .order_by(ExportJobEvent.id)
    ):
        copied[event.details["destination_id"]].append(event.details["bytes_copied"])
    assert set(copied) == {destination.id for destination in destinations}
    for progress in copied.values():
        assert len(progress) > 1 and progress == sorted(set(progress))
        assert progress[-1] == package.size_bytes + checksums_size + package.manifest_size


def test_a_worker_killed_mid_package_is_redelivered_leaving_no_multipart_upload_or_stray_object_in_s3(
    app_on_s3, s3_client, start_worker, hold_lock, app_context
):
    """The same SIGKILL against moto's S3: the redelivered attempt aborts the dead one's multipart upload
    there too, and only its package's objects remain."""
    storage, bucket = app_on_s3, app_on_s3.bucket
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=500)
    lock = hold_lock("LOCK TABLE data_export_parts IN ACCESS EXCLUSIVE MODE")
    execution = _start(workspace)
    worker = start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lock.waiters, timeout=60, what="the worker to record its first part")
    assert len(s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])) == 1
    worker.kill()
    lock.release()
    start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))

    assert redeliver_lapsed(_after_a_dead_holders_lease(execution.id)) == 1

    wait_for(lambda: _settled(execution.id), timeout=120, what="the redelivered execution to settle")
    assert _execution_row(execution.id).status == "succeeded"
    package = package_of(execution.id)
    read_package(storage, package)
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    stored = s3_client.list_objects_v2(Bucket=bucket, Prefix=f"{PREFIX}/packages/").get("Contents", [])
    assert stored and all(item["Key"].startswith(f"{PREFIX}/{package.prefix}") for item in stored)


def test_a_worker_killed_mid_package_is_redelivered_by_the_scheduler_and_succeeds(
    isolated_storage, start_worker, start_scheduler, hold_lock, app_context
):
    """The whole path with real processes: SIGKILL mid-volume, `flask scheduler` notices the lapsed lease
    and dispatches the execution again, another worker completes it."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=500)
    lock = hold_lock("LOCK TABLE data_export_parts IN ACCESS EXCLUSIVE MODE")
    execution = factories.make_execution(
        workspace, settings_snapshot=factories.settings_snapshot(datasets=ALL_DATASETS)
    )
    assert claims.dispatch(EXECUTIONS, execution.id, None)
    first = start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lock.waiters, timeout=60, what="the worker to record its first part")
    first.kill()
    lock.release()
    start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    start_scheduler(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))

    # A dispatch's time in flight, a lease, a watchdog turn and the package itself.
    wait_for(lambda: _settled(execution.id), timeout=LOST_AFTER.total_seconds() + 60, what="the execution to settle")

    done = _execution_row(execution.id)
    assert (done.status, done.attempt_count) == ("succeeded", 2), done.failure_detail
    read_package(isolated_storage, package_of(execution.id))
    assert pending_uploads(isolated_storage) == []


def _signal_worker(worker, signal_number: int) -> None:
    for pid in [worker.pid, *worker.descendants()]:
        os.kill(pid, signal_number)


def test_a_worker_frozen_past_its_lease_wakes_to_find_it_can_change_nothing(
    isolated_storage, start_worker, hold_lock, app_context
):
    """SIGSTOP mid-volume for longer than the lease: the execution is redelivered and succeeds; after
    SIGCONT the frozen attempt's job ends superseded and the package stays whole, with nothing stray."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=500)
    lock = hold_lock("LOCK TABLE data_export_parts IN ACCESS EXCLUSIVE MODE")
    execution, frozen_job = _start_job(workspace)
    frozen = start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lock.waiters, timeout=60, what="the worker to record its first part")
    _signal_worker(frozen, signal.SIGSTOP)
    try:
        lock.release()
        start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
        assert redeliver_lapsed(_after_a_dead_holders_lease(execution.id)) == 1
        wait_for(lambda: _settled(execution.id), timeout=120, what="the redelivered execution to settle")
    finally:
        _signal_worker(frozen, signal.SIGCONT)

    wait_for(lambda: frozen_job.get_status(refresh=True) == "finished", timeout=60, what="the frozen job to end")
    assert frozen_job.return_value() == "superseded"
    done = _execution_row(execution.id)
    assert (done.status, done.attempt_count) == ("succeeded", 2), done.failure_detail
    package = package_of(execution.id)
    read_package(isolated_storage, package)
    assert all(key.startswith(package.prefix) for key in isolated_storage.list_keys("packages/"))
    assert pending_uploads(isolated_storage) == []
