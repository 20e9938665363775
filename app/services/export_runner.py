"""Producing one export file: the use case an RQ job runs (STATE-PFM-QRY-006).

The database row is the source of truth, not Redis: a job may be delivered twice, after its
file settled, or while an earlier attempt is still alive. So every run re-reads the row and
the requester's current access, restarts into the file's fixed key, and settles the file only
through the guarded transitions of app/domain/export_file.py.

Each attempt is identified by the `started_at` it wrote. When a later attempt restarts the
same file (the watchdog saw no heartbeat), the earlier one notices the change and stops
without touching the file: the newer attempt owns the key now.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from datetime import datetime

from flask import current_app
from rq.timeouts import JobTimeoutException
from sqlalchemy import select

from app.domain import export_file
from app.domain.access import RequesterContext, current_context
from app.domain.catalog import get_dataset
from app.domain.errors import AccessDenied, TransitionRefused, ValidationError
from app.extensions import db
from app.models import QueryExport
from app.models.types import utcnow
from app.rendering import TooManyRows
from app.rendering.query_file import write_query_file
from app.services.report_file_production import write_report_file
from app.storage import StorageError, get_storage

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_SECONDS = 1.0


class Superseded(Exception):
    """The file settled, or a newer attempt took it over, while this attempt was producing it."""


def run_export_file(export_id: int) -> str:
    """Produce file `export_id` or record why not; returns one word describing the outcome, for logs."""
    export = db.session.get(QueryExport, export_id)
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
        return _settle_failed(export_id, code, detail)
    assert access is not None

    attempt_started_at = utcnow()
    try:
        export_file.start(export_id, now=attempt_started_at)
    except TransitionRefused:
        log.info("export file %s settled before it could start; redelivery acknowledged", export_id)
        return "already_settled"
    export = db.session.get(QueryExport, export_id)
    assert export is not None
    return _produce(export, access, attempt_started_at)


def _pre_run_refusal(export: QueryExport, access: RequesterContext | None) -> tuple[str, str] | None:
    """Checks made before any byte is written, with the requester's access as it is now."""
    if access is None:
        return "access_lost", (
            "The person who asked for this file is no longer a member of this workspace "
            "(or the workspace is not active), so it was not produced."
        )
    dataset = get_dataset(export.dataset) if export.dataset else None
    if dataset is None:
        return "source_missing", f"The dataset {export.dataset!r} this file reads no longer exists."
    if not access.can_read_dataset(dataset.name):
        return "access_lost", (
            f"The person who asked for this file no longer has access to the dataset {dataset.label!r}, "
            "so it was not produced."
        )
    if export.kind == "report" and export.report_id is None:
        # The database cleared the reference when the report was deleted (ON DELETE SET NULL).
        return "source_missing", "The report this file prints was deleted before the file was made."
    return None


def _produce(export: QueryExport, access: RequesterContext, attempt_started_at: datetime) -> str:
    export_id = export.id
    settings = current_app.config["SETTINGS"]
    progress = _ProgressRecorder(export_id, attempt_started_at)
    try:
        with get_storage().writer(export.storage_key) as out:
            warnings: Counter[str] = Counter()
            if export.kind == "report":
                rows = write_report_file(export, access, out, progress, warnings)
            else:
                rows = write_query_file(export, access, out, progress)
    except Superseded:
        log.info("export file %s was settled or restarted elsewhere; this attempt stopped", export_id)
        return "superseded"
    except Exception as exc:  # every failure settles the file; the writer has aborted the upload
        db.session.rollback()  # a failed statement leaves the session unusable until rolled back
        code, detail = _failure(exc, settings.export_job_timeout)
        if not _attempt_is_current(export_id, attempt_started_at):
            log.info("export file %s: attempt failed (%s) after a newer attempt took over", export_id, code)
            return "superseded"
        return _settle_failed(export_id, code, detail)

    try:
        export_file.succeed(export_id, size_bytes=out.size, row_count=rows, retention_days=settings.file_retention_days)
    except TransitionRefused:
        return _after_refused_success(export_id)
    log.info("export file %s succeeded: %s rows, %s bytes", export_id, rows, out.size)
    return "succeeded"


def _failure(exc: Exception, job_timeout: int) -> tuple[str, str]:
    """The failure code and a detail a person can read."""
    if isinstance(exc, StorageError):
        return "storage_error", f"Storage refused the upload: {exc}"
    if isinstance(exc, TooManyRows):
        return "too_many_rows", str(exc)
    if isinstance(exc, ValidationError):
        return "invalid_request", f"The request stored with this file can no longer be run: {exc}"
    if isinstance(exc, AccessDenied):
        return "access_lost", f"The requester's access no longer allows this file: {exc}"
    if isinstance(exc, JobTimeoutException):
        return "timeout", f"Producing the file took longer than the {job_timeout} seconds allowed."
    log.exception("export file production failed unexpectedly")
    return "internal", f"Unexpected error while producing the file: {type(exc).__name__}: {exc}"


def _settle_failed(export_id: int, code: str, detail: str) -> str:
    try:
        export_file.fail(export_id, code, detail)
    except TransitionRefused:
        log.info("export file %s settled elsewhere before it could fail with %s", export_id, code)
        return "already_settled"
    log.info("export file %s failed: %s: %s", export_id, code, detail)
    return code


def _after_refused_success(export_id: int) -> str:
    """The bytes are stored but the file settled meanwhile. If it failed, the object must not stay."""
    status, key = db.session.execute(
        select(QueryExport.status, QueryExport.storage_key).where(QueryExport.id == export_id)
    ).one()
    db.session.rollback()
    if status == "failed":
        get_storage().delete(key)
        log.info("export file %s failed while this attempt finished; its object was removed", export_id)
    return "superseded"


def _attempt_is_current(export_id: int, attempt_started_at: datetime) -> bool:
    """True unless another attempt restarted the file after this one started."""
    started_at = db.session.scalar(select(QueryExport.started_at).where(QueryExport.id == export_id))
    db.session.rollback()
    return started_at == attempt_started_at


class _ProgressRecorder:
    """The renderer's progress callback: writes progress (the heartbeat) at most once a second.

    Writes go through their own app context, hence their own session and connection, so
    committing them never disturbs the session streaming the rows.
    """

    def __init__(self, export_id: int, attempt_started_at: datetime):
        self._export_id = export_id
        self._attempt_started_at = attempt_started_at
        self._last_recorded = time.monotonic()

    def __call__(self, rows_written: int, rows_total: int | None) -> None:
        if time.monotonic() - self._last_recorded < PROGRESS_INTERVAL_SECONDS:
            return
        with current_app.app_context():
            if not _attempt_is_current(self._export_id, self._attempt_started_at):
                raise Superseded()
            try:
                export_file.record_progress(self._export_id, rows_written, rows_total)
            except TransitionRefused as exc:
                raise Superseded() from exc
        self._last_recorded = time.monotonic()
