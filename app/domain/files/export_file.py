"""The export-file lifecycle (STATE-PFM-QRY-006): one function per transition.

Each is a conditional UPDATE whose WHERE clause carries the allowed starting statuses, so two
workers, a watchdog and a redelivery can race without reopening a settled file (INV-02).

Attempts are fenced: `start` numbers each attempt (`attempt_count`), and every later
transition names the attempt it acts for and applies only while that attempt is still the
file's latest. A stale attempt (its worker was thought dead and the file restarted) therefore
changes nothing, whatever it finishes or however late.
A refused transition raises TransitionRefused; callers decide whether that is an error.
Every transition commits: each is a fact the worker, the watchdog or the page relies on.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, null, or_

from app.domain import transitions
from app.domain.files import file_warnings
from app.extensions import db
from app.models import ExportFile
from app.models.export_file import ACTIVE_FILE_STATUSES, FailureCode, FileStatus
from app.models.types import DETAIL_LIMIT, Moment, database_time, lease_lapsed, moment_after


def _apply(
    export_id: int,
    from_statuses: tuple[FileStatus, ...],
    attempt: int | None,
    values: dict,
    action: str,
    also: tuple[ColumnElement[bool], ...] = (),
) -> int:
    """The guarded UPDATE of one file (app/domain/transitions.py); returns its attempt number.
    `attempt=None` only for `start`."""
    guard = [ExportFile.id == export_id, ExportFile.status.in_(from_statuses), *also]
    expected = " or ".join(from_statuses)
    if attempt is not None:
        guard.append(ExportFile.attempt_count == attempt)
        expected += f" at attempt {attempt}"
    refusal = f"file {export_id} cannot {action}: it is not {expected}"
    return transitions.apply(ExportFile, guard, values, refusal, ExportFile.attempt_count)


def start(
    export_id: int,
    now: datetime | None = None,
    holder: str | None = None,
    lease_expires_at: Moment | None = None,
) -> int:
    """queued → running, or running → running on redelivery once the holder's lease lapsed by
    `now` (production restarts into the same key). A second job for a file whose holder still
    renews its lease is refused: the live attempt keeps it, however slow it is.

    Returns the number of this attempt, which every later transition of the attempt names. The
    starting attempt takes the lease (app/services/work/leases.py); without one the watchdog counts
    the file as abandoned. Times are the database's clock's unless the caller gives `now`.
    """
    at = database_time(now)
    number = _apply(
        export_id,
        ACTIVE_FILE_STATUSES,
        None,
        {
            "status": FileStatus.RUNNING,
            "started_at": at,
            "heartbeat_at": at,
            "rows_written": 0,
            "attempt_count": ExportFile.attempt_count + 1,
            "lease_holder": holder,
            "lease_expires_at": lease_expires_at,
        },
        "start",
        also=(or_(ExportFile.status == FileStatus.QUEUED, lease_lapsed(ExportFile.lease_expires_at, now)),),
    )
    db.session.commit()
    return number


def renew_lease(export_id: int, attempt: int, lease_expires_at: Moment) -> None:
    """Extend the lease of the running attempt; refused once the file settled or a newer attempt restarted it."""
    _apply(export_id, (FileStatus.RUNNING,), attempt, {"lease_expires_at": lease_expires_at}, "renew its lease")
    db.session.commit()


def record_progress(
    export_id: int, attempt: int, rows_written: int, rows_total: int | None, now: datetime | None = None
) -> None:
    """Progress of the running attempt, for the page; refused once the file settled or restarted."""
    _apply(
        export_id,
        (FileStatus.RUNNING,),
        attempt,
        {"rows_written": rows_written, "rows_total": rows_total, "heartbeat_at": database_time(now)},
        "record progress",
    )
    db.session.commit()


def succeed(
    export_id: int,
    attempt: int,
    size_bytes: int,
    row_count: int,
    retention_days: int,
    now: datetime | None = None,
    warnings: Mapping[str, int] | None = None,
    rows_digest: str | None = None,
) -> None:
    """running → succeeded for the current attempt: size, rows and their digest, completion, the
    completion-based expiry and the file's warnings."""
    at = database_time(now)
    _apply(
        export_id,
        (FileStatus.RUNNING,),
        attempt,
        {
            "status": FileStatus.SUCCEEDED,
            "size_bytes": size_bytes,
            "row_count": row_count,
            "rows_digest": rows_digest,
            "rows_written": row_count,
            "completed_at": at,
            "expires_at": moment_after(at, timedelta(days=retention_days)),
            "heartbeat_at": at,
            "warnings": file_warnings.stored(warnings) or null(),
        },
        "succeed",
    )
    db.session.commit()


def fail(export_id: int, attempt: int, code: FailureCode, detail: str, now: datetime | None = None) -> None:
    """queued → failed (pre-render checks) or running → failed, with a code and a bounded detail.

    `attempt` is the attempt number the caller saw (0 for a file that never started): a file
    restarted since is not failed on that attempt's behalf.
    """
    at = database_time(now)
    _apply(
        export_id,
        ACTIVE_FILE_STATUSES,
        attempt,
        {
            "status": FileStatus.FAILED,
            "failure_code": FailureCode(code),
            "failure_detail": detail[:DETAIL_LIMIT],
            "completed_at": at,
            "heartbeat_at": at,
        },
        "fail",
    )
    db.session.commit()


def cancel(export_id: int, cancelled_by_id: int, detail: str, now: datetime | None = None) -> None:
    """queued → failed or running → failed with code `cancelled`, whichever attempt is running.

    Not fenced on an attempt: a person stops the file, not one attempt of it. The running
    attempt learns it at its next fenced write (progress, lease, completion), which is refused,
    and it aborts its upload (app/services/files/export_runner.py).
    """
    at = database_time(now)
    _apply(
        export_id,
        ACTIVE_FILE_STATUSES,
        None,
        {
            "status": FileStatus.FAILED,
            "failure_code": FailureCode.CANCELLED,
            "failure_detail": detail[:DETAIL_LIMIT],
            "cancelled_by_id": cancelled_by_id,
            "completed_at": at,
            "heartbeat_at": at,
        },
        "be cancelled",
    )
    db.session.commit()
