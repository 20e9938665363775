"""Producing a workspace-export package: the use case the RQ job `jobs.package_execution.run` runs.

Phases (each logged as started and finished, with counts):

- snapshot: one consistent snapshot of the workspace (app/data/package_snapshot.py); its time
  is the cutoff the execution records; the rows of every dataset are counted (rows_expected).
- writing: each dataset streamed into volumes, each uploaded as it is written
  (app/services/workspace_export/package_writing.py).
- uploading: SHA256SUMS, then the manifest, last; then the package becomes `available`
  (app/services/workspace_export/package_publishing.py).
- delivering: app.services.workspace_export.package_delivery.deliver_package, with the bytes copied to each
  destination recorded as `counts` events (app/services/workspace_export/package_delivery_progress.py).
- notifying: a PACKAGE_READY notice; then the execution succeeds.

An attempt starts only from `queued`, or from `running` once the earlier holder's lease lapsed
(the watchdog redelivered it, app/services/workspace_export/execution_work.py); a job arriving while the
holder lives starts nothing. Every attempt writes under a prefix of its own
(app/services/workspace_export/package_keys.py), and a redelivered one first removes what earlier attempts left
unpublished (aborted uploads, objects), so nothing stray remains; when an earlier attempt had
already published the package, it goes on from delivering that package. Every update names the
attempt (app/services/workspace_export/production_attempt.py); once a newer attempt or the watchdog took the
execution, this attempt's updates are refused and it stops, removing its own objects. A failure
settles the execution `failed` with a code and a sentence a person can read
(app/services/workspace_export/production_failures.py) and sends an EXECUTION_FAILED notice.
"""

from __future__ import annotations

import logging

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from app.data.package_snapshot import PackagedDataset, PackageSnapshot, open_snapshot, packaged_datasets
from app.domain.errors import TransitionRefused
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_execution import ACTIVE_EXECUTION_STATUSES, ExecutionFailure, ExecutionPhase, ExportExecution
from app.models.export_notice import NoticeKind
from app.models.export_package import ExportPackage
from app.models.types import Moment
from app.services.work import leases
from app.services.workspace_export import export_notices, package_delivery
from app.services.workspace_export.coverage import verified_registry_version
from app.services.workspace_export.package_cleanup import remove_attempt_leftovers
from app.services.workspace_export.package_delivery_progress import DeliveryProgress
from app.services.workspace_export.package_publishing import publish
from app.services.workspace_export.package_writing import write_datasets
from app.services.workspace_export.production_attempt import (
    ExecutionAttemptSuperseded,
    ProductionAttempt,
    ProductionCounts,
)
from app.services.workspace_export.production_failures import recorded_failure, snapshot_failed
from app.storage import get_storage

log = logging.getLogger(__name__)


def run_execution(execution_id: int) -> str:
    """Produce the package of execution `execution_id`, or record why not; returns one word for logs."""
    execution = db.session.get(ExportExecution, execution_id)
    if execution is None:
        log.warning("workspace export %s does not exist (deleted with its workspace?); nothing to do", execution_id)
        return "missing"
    if execution.status not in ACTIVE_EXECUTION_STATUSES:
        log.info("workspace export %s is already %s; redelivery acknowledged", execution_id, execution.status)
        return "already_settled"
    workspace_id, snapshot_settings = execution.workspace_id, dict(execution.settings_snapshot)
    try:
        number = export_execution.start_attempt(execution_id, leases.holder_name(), leases.lease_expiry())
    except TransitionRefused:
        log.info(
            "workspace export %s settled, or its attempt still holds a live lease, before this job could start "
            "an attempt; the job leaves it alone",
            execution_id,
        )
        return "not_started"

    attempt = ProductionAttempt(execution_id, workspace_id, number, snapshot_settings, get_storage())

    def renew(lease_expires_at: Moment) -> None:
        export_execution.renew_lease(execution_id, number, lease_expires_at)

    with leases.renewed_while_running(renew, f"workspace export {execution_id}"):
        return _run(attempt)


def _run(attempt: ProductionAttempt) -> str:
    try:
        package_id = _resumed_package(attempt) or _produce(attempt)
    except ExecutionAttemptSuperseded:
        log.info(
            "workspace export %s attempt %s was settled or restarted elsewhere; it stopped",
            attempt.execution_id,
            attempt.number,
        )
        attempt.remove_own_leftovers()
        return "superseded"
    except Exception as exc:  # every failure settles the execution, after its objects are removed
        db.session.rollback()  # a failed statement leaves the session unusable until rolled back
        code, detail = recorded_failure(exc, attempt.execution_id, attempt.phase)
        attempt.remove_own_leftovers()
        return _fail(attempt, code, detail)
    try:
        _deliver(attempt, package_id)
        _notify_ready(attempt, package_id)
        export_execution.succeed(attempt.execution_id, attempt.number)
    except TransitionRefused:
        # The package is available and stays so; only the execution's settlement moved on.
        log.info(
            "workspace export %s attempt %s is no longer current after its package %s was made",
            attempt.execution_id,
            attempt.number,
            package_id,
        )
        return "superseded"
    log.info(
        "workspace export %s succeeded: package %s, %s rows, %s bytes, %s volumes",
        attempt.execution_id,
        package_id,
        attempt.counts.rows,
        attempt.counts.bytes,
        attempt.counts.volumes,
    )
    return "succeeded"


def _resumed_package(attempt: ProductionAttempt) -> int | None:
    """On a redelivered attempt: remove what earlier attempts left unpublished, and return the
    package an earlier attempt published (this attempt then only delivers and notifies), if any."""
    if attempt.number == 1:
        return None
    with attempt.fenced():
        remove_attempt_leftovers(attempt.storage, attempt.workspace_id, attempt.execution_id, range(1, attempt.number))
    package = db.session.scalars(
        select(ExportPackage).where(ExportPackage.execution_id == attempt.execution_id)
    ).first()
    if package is None:
        db.session.rollback()
        return None
    package_id = package.id
    attempt.counts = ProductionCounts(
        rows_expected=package.row_count,
        rows=package.row_count,
        bytes=package.size_bytes,
        volumes=package.volumes_count,
    )
    with attempt.fenced():
        export_execution.log_event(
            attempt.execution_id,
            attempt.number,
            "warning",
            f"The previous attempt stopped after its package {package.uid} was made available; "
            "this attempt goes on from its delivery.",
            details={"package_id": package_id},
        )
    return package_id


def _produce(attempt: ProductionAttempt) -> int:
    with attempt.fenced():
        export_execution.enter_phase(attempt.execution_id, attempt.number, ExecutionPhase.SNAPSHOT)
    registry_version = verified_registry_version()
    datasets = packaged_datasets(attempt.snapshot_settings["datasets"])
    try:
        with open_snapshot(attempt.workspace_id) as snapshot:
            expected = _take_snapshot(attempt, snapshot, datasets)
            manifest_datasets = write_datasets(attempt, snapshot, datasets, expected)
    except SQLAlchemyError as exc:
        if attempt.phase != ExecutionPhase.SNAPSHOT:
            raise
        log.error("workspace export %s: the snapshot could not be taken", attempt.execution_id, exc_info=exc)
        raise snapshot_failed(attempt.execution_id) from exc
    return publish(attempt, snapshot.cutoff_at, manifest_datasets, registry_version)


def _take_snapshot(
    attempt: ProductionAttempt, snapshot: PackageSnapshot, datasets: list[PackagedDataset]
) -> dict[str, int]:
    with attempt.fenced():
        export_execution.record_cutoff(attempt.execution_id, attempt.number, snapshot.cutoff_at)
    expected = {dataset.name: snapshot.count(dataset) for dataset in datasets}
    attempt.counts.rows_expected = sum(expected.values())
    with attempt.fenced():
        export_execution.record_progress(
            attempt.execution_id,
            attempt.number,
            datasets_count=len(datasets),
            rows_expected=attempt.counts.rows_expected,
            rows_written=0,
            bytes_written=0,
            volumes_count=0,
        )
        export_execution.finish_phase(
            attempt.execution_id,
            attempt.number,
            ExecutionPhase.SNAPSHOT,
            f"Snapshot taken at {snapshot.cutoff_at.isoformat()}: {len(datasets)} datasets, "
            f"{attempt.counts.rows_expected} rows.",
            details={"cutoff_at": snapshot.cutoff_at.isoformat(), "rows": expected},
        )
    return expected


def _deliver(attempt: ProductionAttempt, package_id: int) -> None:
    attempt.phase = ExecutionPhase.DELIVERING
    export_execution.enter_phase(attempt.execution_id, attempt.number, ExecutionPhase.DELIVERING)
    try:
        package_delivery.deliver_package(package_id, DeliveryProgress(attempt, package_id))
    except Exception:  # the package is available; deliveries are retried on their own
        db.session.rollback()
        log.exception("workspace export %s: delivering package %s failed", attempt.execution_id, package_id)
        export_execution.log_event(
            attempt.execution_id,
            attempt.number,
            "warning",
            "The package is available, but starting its deliveries failed; they are retried later.",
            phase=ExecutionPhase.DELIVERING,
        )
    export_execution.finish_phase(
        attempt.execution_id, attempt.number, ExecutionPhase.DELIVERING, "Deliveries started."
    )


def _notify_ready(attempt: ProductionAttempt, package_id: int) -> None:
    attempt.phase = ExecutionPhase.NOTIFYING
    export_execution.enter_phase(attempt.execution_id, attempt.number, ExecutionPhase.NOTIFYING)
    try:
        notices = export_notices.notify(NoticeKind.PACKAGE_READY, "package", package_id, attempt.workspace_id)
    except Exception:  # recorded notices are dispatched again by the work engine
        db.session.rollback()
        log.exception("workspace export %s: notifying package %s failed", attempt.execution_id, package_id)
        export_execution.log_event(
            attempt.execution_id,
            attempt.number,
            "warning",
            "The package is available, but its notices could not all be sent; they are retried later.",
            phase=ExecutionPhase.NOTIFYING,
        )
        notices = 0
    export_execution.finish_phase(
        attempt.execution_id,
        attempt.number,
        ExecutionPhase.NOTIFYING,
        f"{notices} notices sent.",
        details={"notices_sent": notices},
    )


def _fail(attempt: ProductionAttempt, code: ExecutionFailure, detail: str) -> str:
    try:
        export_execution.fail(attempt.execution_id, attempt.number, code, detail)
    except TransitionRefused:
        log.info(
            "workspace export %s moved on before attempt %s could fail it with %s",
            attempt.execution_id,
            attempt.number,
            code,
        )
        return "superseded"
    log.info("workspace export %s failed: %s: %s", attempt.execution_id, code, detail)
    export_notices.notify_execution_failed(attempt.execution_id, attempt.workspace_id)
    return code
