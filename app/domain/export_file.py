"""The export-file lifecycle (STATE-PFM-QRY-006): one function per transition.

Each is a conditional UPDATE whose WHERE clause carries the allowed starting statuses, so two
workers, a watchdog and a redelivery can race without reopening a settled file (INV-02).
A refused transition raises TransitionRefused; callers decide whether that is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from sqlalchemy import null, update

from app.domain import file_warnings
from app.domain.errors import TransitionRefused
from app.extensions import db
from app.models import QueryExport
from app.models.types import utcnow

DETAIL_LIMIT = 1000


def _apply(export_id: int, from_statuses: tuple[str, ...], values: dict, action: str) -> None:
    result = db.session.execute(
        update(QueryExport)
        .where(QueryExport.id == export_id, QueryExport.status.in_(from_statuses))
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:
        db.session.rollback()
        raise TransitionRefused(f"file {export_id} cannot {action}: it is not {' or '.join(from_statuses)}")
    db.session.commit()


def start(export_id: int, now: datetime | None = None) -> None:
    """queued → running, or running → running on redelivery (production restarts into the same key)."""
    now = now or utcnow()
    _apply(
        export_id,
        ("queued", "running"),
        {
            "status": "running",
            "started_at": now,
            "heartbeat_at": now,
            "rows_written": 0,
            "attempt_count": QueryExport.attempt_count + 1,
        },
        "start",
    )


def record_progress(export_id: int, rows_written: int, rows_total: int | None, now: datetime | None = None) -> None:
    """Progress and heartbeat of a running file; refused once it has settled."""
    _apply(
        export_id,
        ("running",),
        {"rows_written": rows_written, "rows_total": rows_total, "heartbeat_at": now or utcnow()},
        "record progress",
    )


def succeed(
    export_id: int,
    size_bytes: int,
    row_count: int,
    retention_days: int,
    now: datetime | None = None,
    warnings: Mapping[str, int] | None = None,
) -> None:
    """running → succeeded: size, rows, completion, the completion-based expiry and the file's warnings."""
    now = now or utcnow()
    _apply(
        export_id,
        ("running",),
        {
            "status": "succeeded",
            "size_bytes": size_bytes,
            "row_count": row_count,
            "rows_written": row_count,
            "completed_at": now,
            "expires_at": now + timedelta(days=retention_days),
            "heartbeat_at": now,
            "warnings": file_warnings.stored(warnings) or null(),
        },
        "succeed",
    )


def fail(export_id: int, code: str, detail: str, now: datetime | None = None) -> None:
    """queued → failed (pre-render checks) or running → failed, with a code and a bounded detail."""
    now = now or utcnow()
    _apply(
        export_id,
        ("queued", "running"),
        {
            "status": "failed",
            "failure_code": code,
            "failure_detail": detail[:DETAIL_LIMIT],
            "completed_at": now,
            "heartbeat_at": now,
        },
        "fail",
    )
