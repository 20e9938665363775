"""Producing one export file: the use case an RQ job runs (STATE-PFM-QRY-006).

The database row is the source of truth, not Redis: a job may be delivered twice, after its
file settled, or while an earlier attempt is still alive. So every run re-reads the row and
the requester's current access, restarts into the file's fixed key, and settles the file only
through the guarded transitions of app/domain/files/export_file.py.

Each attempt is numbered by `start` and every later transition names that number, so an
attempt that a restart made stale (the watchdog saw its lease lapse) can change nothing in the
row. The stored object is fenced too (docs/architecture.md, "Attempts"): an attempt aborts
every earlier upload to the key right after it starts, and checks it is still current after
its own upload began and before completing it. Hence a stale attempt's upload is either
aborted or completed before the newer attempt's, which then replaces or deletes it.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter

from flask import current_app
from rq.timeouts import JobTimeoutException
from sqlalchemy import select

from app.domain.errors import AccessDenied, TransitionRefused, ValidationError
from app.domain.files import export_file
from app.domain.people.access import RequesterContext, current_context
from app.domain.sources.catalog import get_dataset
from app.extensions import db
from app.models import ExportFile
from app.models.export_file import FailureCode, FileKind, FileStatus
from app.models.types import Moment
from app.rendering import TooManyRows
from app.services.files.audit_file_production import write_audit_file
from app.services.files.query_file_production import write_query_file
from app.services.files.report_file_production import write_report_file
from app.services.work import leases
from app.storage import StorageError, StorageFull, get_storage

log = logging.getLogger(__name__)

# What writes a file of each kind (query_exports.kind).
WRITERS = {FileKind.QUERY: write_query_file, FileKind.REPORT: write_report_file, FileKind.AUDIT: write_audit_file}


class FileAttemptSuperseded(Exception):
    """The file settled, or a newer attempt took it over, while this attempt was producing it.

    Outside DomainError: a signal inside the job, which stops the stale attempt quietly."""


# What `run_export_file` answers when another attempt, whose holder is alive, is producing the file.
HELD_ELSEWHERE = "held_elsewhere"


def run_export_file(export_id: int) -> str:
    """Produce file `export_id` or record why not; returns one word describing the outcome, for logs
    (HELD_ELSEWHERE when a live attempt of another job is producing it)."""
    export = db.session.get(ExportFile, export_id)
    if export is None:
        log.warning("export file %s does not exist (deleted with its workspace?); nothing to do", export_id)
        return "missing"
    if export.is_settled:
        log.info("export file %s is already %s; redelivery acknowledged", export_id, export.status)
        return "already_settled"

    access = current_context(export.workspace_id, export.requester_id)
    refusal = _pre_run_refusal(export, access)
    if refusal is not None:
        code, detail = refusal
        return _settle_failed(export_id, export.attempt_count, code, detail)
    assert access is not None

    try:
        attempt = export_file.start(export_id, holder=leases.holder_name(), lease_expires_at=leases.lease_expiry())
    except TransitionRefused:
        if _settled(export_id):
            log.info("export file %s settled before it could start; redelivery acknowledged", export_id)
            return "already_settled"
        log.info("export file %s is held by a live attempt; this job leaves it to that attempt", export_id)
        return HELD_ELSEWHERE
    export = db.session.get(ExportFile, export_id)
    assert export is not None
    return _produce(export, access, attempt)


def _settled(export_id: int) -> bool:
    export = db.session.get(ExportFile, export_id, populate_existing=True)
    db.session.rollback()
    return export is None or export.is_settled


def _pre_run_refusal(export: ExportFile, access: RequesterContext | None) -> tuple[FailureCode, str] | None:
    """Checks made before any byte is written, with the requester's access as it is now."""
    if access is None:
        return FailureCode.ACCESS_LOST, (
            "The person who asked for this file is no longer a member of this workspace "
            "(or the workspace is not active), so it was not produced."
        )
    if export.kind == FileKind.AUDIT:
        if access.is_admin:
            return None
        return FailureCode.ACCESS_LOST, (
            "The person who asked for this file is no longer an administrator of this workspace, "
            "and only administrators may read its audit log, so it was not produced."
        )
    dataset = get_dataset(export.dataset) if export.dataset else None
    if dataset is None:
        return FailureCode.SOURCE_MISSING, f"The dataset {export.dataset!r} this file reads no longer exists."
    if not access.can_read_dataset(dataset.name):
        return FailureCode.ACCESS_LOST, (
            f"The person who asked for this file no longer has access to the dataset {dataset.label!r}, "
            "so it was not produced."
        )
    if export.kind == FileKind.REPORT and export.report_id is None:
        # The database cleared the reference when the report was deleted (ON DELETE SET NULL).
        return FailureCode.SOURCE_MISSING, "The report this file prints was deleted before the file was made."
    return None


def _produce(export: ExportFile, access: RequesterContext, attempt: int) -> str:
    export_id = export.id
    settings = current_app.config["SETTINGS"]
    storage = get_storage()
    progress = _ProgressRecorder(export_id, attempt)
    warnings: Counter[str] = Counter()

    def renew(lease_expires_at: Moment) -> None:
        export_file.renew_lease(export_id, attempt, lease_expires_at)

    try:
        # Entering the writer aborts every earlier upload to the key, then begins this attempt's.
        with (
            leases.renewed_while_running(renew, f"export file {export_id}"),
            storage.writer(export.storage_key) as out,
        ):
            write = WRITERS[FileKind(export.kind)]
            written = write(export, access, out, progress, warnings)
            # Checked after this upload began: a restart after this check aborts the upload,
            # so a stale attempt never publishes over a newer one.
            if not _attempt_is_current(export_id, attempt):
                raise FileAttemptSuperseded()
    except FileAttemptSuperseded:
        log.info("export file %s attempt %s was settled or restarted elsewhere; it stopped", export_id, attempt)
        return "superseded"
    except Exception as exc:  # every failure settles the file; the writer has aborted the upload
        db.session.rollback()  # a failed statement leaves the session unusable until rolled back
        code, detail = _failure(exc, settings.export_job_timeout, export_id)
        return _settle_failed(export_id, attempt, code, detail)

    if out.size is None:
        raise RuntimeError("the writer's block ended cleanly, yet its upload recorded no size")
    try:
        export_file.succeed(
            export_id,
            attempt,
            size_bytes=out.size,
            row_count=written.count,
            rows_digest=written.digest,
            retention_days=settings.file_retention_days,
            warnings=warnings,
        )
    except TransitionRefused:
        return _after_refused_success(export_id, attempt)
    log.info("export file %s succeeded: %s rows, %s bytes", export_id, written.count, out.size)
    return "succeeded"


def _failure(exc: Exception, job_timeout: int, export_id: int) -> tuple[FailureCode, str]:
    """The failure code and a detail a person can read.

    Storage and unexpected errors carry keys, paths, SQL and parameters: those go to the log with
    the file's id, and the person reads a sentence that gives the id as the reference.
    """
    if isinstance(exc, StorageFull):
        log.error("export file %s: storage is full: %s", export_id, exc)
        return FailureCode.STORAGE_FULL, (
            "The file could not be stored: the file storage is full. Nothing is wrong with the request; "
            f"request it again once space has been freed (our staff are told). The reference is “file {export_id}”."
        )
    if isinstance(exc, StorageError):
        log.error("export file %s: storage refused the upload: %s", export_id, exc)
        return FailureCode.STORAGE_ERROR, (
            f"The file could not be stored: the storage service refused it. Try again later; if it keeps "
            f"failing, contact support with the reference “file {export_id}”."
        )
    if isinstance(exc, TooManyRows):
        return FailureCode.TOO_MANY_ROWS, str(exc)
    if isinstance(exc, ValidationError):
        return FailureCode.INVALID_REQUEST, f"The request stored with this file can no longer be run: {exc}"
    if isinstance(exc, AccessDenied):
        return FailureCode.ACCESS_LOST, f"The requester's access no longer allows this file: {exc}"
    if isinstance(exc, JobTimeoutException):
        return FailureCode.TIMEOUT, f"Producing the file took longer than the {job_timeout} seconds allowed."
    log.error("export file %s: production failed unexpectedly", export_id, exc_info=exc)
    return FailureCode.INTERNAL, (
        f"Something went wrong while producing the file, and the error was logged. Request the file again; "
        f"if it fails again, contact support with the reference “file {export_id}”."
    )


def _settle_failed(export_id: int, attempt: int, code: FailureCode, detail: str) -> str:
    try:
        export_file.fail(export_id, attempt, code, detail)
    except TransitionRefused:
        log.info("export file %s moved on before attempt %s could fail it with %s", export_id, attempt, code)
        return "superseded"
    log.info("export file %s failed: %s: %s", export_id, code, detail)
    if attempt:
        # A stale attempt may have completed its upload just before this one aborted it.
        _remove_object(export_id)
    return code


def _after_refused_success(export_id: int, attempt: int) -> str:
    """The bytes are stored but this attempt may no longer settle the file.

    If a newer attempt took over, the key is its to replace (on success) or delete (on failure).
    If the file failed during this attempt (the watchdog gave up), no one else will remove the
    object: this attempt does.
    """
    status, current_attempt = db.session.execute(
        select(ExportFile.status, ExportFile.attempt_count).where(ExportFile.id == export_id)
    ).one()
    db.session.rollback()
    if status == FileStatus.FAILED and current_attempt == attempt:
        _remove_object(export_id)
        log.info("export file %s failed while attempt %s finished; its object was removed", export_id, attempt)
    return "superseded"


def _remove_object(export_id: int) -> None:
    """Delete the object under a failed file's key; the expiry sweep retries what this cannot."""
    key = db.session.scalar(select(ExportFile.storage_key).where(ExportFile.id == export_id))
    db.session.rollback()
    if key is None:
        return  # the record was deleted meanwhile: no key is left here to name its object
    with contextlib.suppress(StorageError):
        get_storage().delete(key)


def _attempt_is_current(export_id: int, attempt: int) -> bool:
    """True while the file runs and no other attempt restarted it after this one started."""
    status, current_attempt = db.session.execute(
        select(ExportFile.status, ExportFile.attempt_count).where(ExportFile.id == export_id)
    ).one()
    db.session.rollback()
    return status == FileStatus.RUNNING and current_attempt == attempt


class _ProgressRecorder:
    """The renderer's progress callback: writes progress (the heartbeat) at most once per
    PROGRESS_INTERVAL (a second unless configured).

    Writes go through their own app context, hence their own session and connection, so
    committing them never disturbs the session streaming the rows.
    """

    def __init__(self, export_id: int, attempt: int):
        self._export_id = export_id
        self._attempt = attempt
        self._interval = current_app.config["SETTINGS"].progress_interval_seconds
        self._last_recorded = time.monotonic()

    def __call__(self, rows_written: int, rows_total: int | None) -> None:
        if time.monotonic() - self._last_recorded < self._interval:
            return
        with current_app.app_context():
            try:
                export_file.record_progress(self._export_id, self._attempt, rows_written, rows_total)
            except TransitionRefused as exc:
                raise FileAttemptSuperseded() from exc
        self._last_recorded = time.monotonic()
