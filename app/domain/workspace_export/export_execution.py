"""The workspace-export execution lifecycle (STATE-PFM-QRY-012, DESIGN section 8):
`queued → running → succeeded | failed`, `queued → cancelled`.

Every transition is one conditional UPDATE whose WHERE clause names the status it starts from
(INV-12), and every transition after `start_attempt` names the attempt it acts for: an attempt
the watchdog made stale can change nothing. A refused transition raises TransitionRefused.

Admission itself (the INSERT, under the partial unique index that allows one queued or running
execution per workspace, INV-09) is `admit`; the caller commits it with its audit event.
Transitions after admission commit, because each is a fact the next process relies on.
Events are appended through `append_event`, in the caller's transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_

from app.domain import transitions
from app.extensions import db
from app.models.export_execution import (
    ACTIVE_EXECUTION_STATUSES,
    ExecutionFailure,
    ExecutionPhase,
    ExecutionStatus,
    ExecutionTrigger,
    ExportExecution,
    ExportJobEvent,
)
from app.models.types import DETAIL_LIMIT, Moment, database_now, database_time, lease_lapsed

# The guarded UPDATE of one execution; returns its attempt number.
_apply = transitions.of_rows(ExportExecution, "workspace export", ExportExecution.attempt_count)


def append_event(
    execution_id: int,
    attempt: int,
    kind: str,
    message: str,
    phase: ExecutionPhase | str | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    """Add an event to the log in the caller's transaction (append-only: nothing updates events)."""
    db.session.add(
        ExportJobEvent(
            execution_id=execution_id,
            attempt=attempt,
            kind=kind,
            phase=phase,
            message=message[:DETAIL_LIMIT],
            details=details or {},
        )
    )


def admit(
    *,
    workspace_id: int,
    trigger: ExecutionTrigger,
    requested_by_id: int | None,
    settings_snapshot: dict[str, Any],
    allowance_used: int,
    allowance_limit: int,
    cadence_key: str | None = None,
    now: datetime | None = None,
) -> ExportExecution:
    """Add a queued execution to the session and flush it; the partial unique index refuses a
    second queued or running one (IntegrityError), so the caller's check cannot race. Not committed."""
    at = database_time(now)
    execution = ExportExecution(
        workspace_id=workspace_id,
        trigger=trigger,
        cadence_key=cadence_key,
        requested_by_id=requested_by_id,
        cutoff_at=at,
        settings_snapshot=settings_snapshot,
        allowance_used=allowance_used,
        allowance_limit=allowance_limit,
        status=ExecutionStatus.QUEUED,
        created_at=at,
    )
    db.session.add(execution)
    db.session.flush()
    append_event(
        execution.id,
        0,
        "admitted",
        f"Admitted ({trigger}).",
        details={"allowance_used": allowance_used, "allowance_limit": allowance_limit},
    )
    return execution


def start_attempt(execution_id: int, holder: str, lease_expires_at: Moment, now: datetime | None = None) -> int:
    """queued → running, or running → running once the holder's lease lapsed by `now` (its worker
    died and the watchdog redelivered it); takes the lease. A second job for an execution whose
    holder still renews its lease is refused: the live attempt keeps it, however slow it is.
    Returns the attempt number every later transition of this attempt must name."""
    at = database_time(now)
    number = _apply(
        execution_id,
        [
            or_(
                ExportExecution.status == ExecutionStatus.QUEUED,
                and_(
                    ExportExecution.status == ExecutionStatus.RUNNING,
                    lease_lapsed(ExportExecution.lease_expires_at, at),
                ),
            )
        ],
        {
            "status": ExecutionStatus.RUNNING,
            "attempt_count": ExportExecution.attempt_count + 1,
            "started_at": at,
            "progress_at": at,
            "phase": ExecutionPhase.SNAPSHOT,
            "lease_holder": holder,
            "lease_expires_at": lease_expires_at,
        },
        "start an attempt",
    )
    db.session.commit()
    return number


def _current(attempt: int) -> list:
    return [ExportExecution.status == ExecutionStatus.RUNNING, ExportExecution.attempt_count == attempt]


def renew_lease(execution_id: int, attempt: int, lease_expires_at: Moment) -> None:
    _apply(execution_id, _current(attempt), {"lease_expires_at": lease_expires_at}, "renew its lease")
    db.session.commit()


def record_cutoff(execution_id: int, attempt: int, cutoff_at: datetime) -> None:
    """The moment this attempt's snapshot was taken: the data cutoff the package describes."""
    _apply(
        execution_id, _current(attempt), {"cutoff_at": cutoff_at, "progress_at": database_now()}, "record its cutoff"
    )
    db.session.commit()


def enter_phase(execution_id: int, attempt: int, phase: ExecutionPhase, message: str | None = None) -> None:
    """Move to `phase` and log it (the previous phase's end is logged by `finish_phase`)."""
    _apply_to_attempt(execution_id, attempt, {"phase": phase, "progress_at": database_now()}, "enter a phase")
    append_event(execution_id, attempt, "phase_started", message or f"Phase {phase} started.", phase=phase)
    db.session.commit()


def finish_phase(
    execution_id: int, attempt: int, phase: ExecutionPhase, message: str, details: dict[str, Any] | None = None
) -> None:
    _apply_to_attempt(execution_id, attempt, {"progress_at": database_now()}, "finish a phase")
    append_event(execution_id, attempt, "phase_finished", message, phase=phase, details=details)
    db.session.commit()


def record_progress(execution_id: int, attempt: int, **counts: int | None) -> None:
    """Update counts (datasets_count, rows_expected, rows_written, bytes_written, volumes_count)
    and the heartbeat the watchdog reads."""
    allowed = {"datasets_count", "rows_expected", "rows_written", "bytes_written", "volumes_count"}
    unknown = set(counts) - allowed
    if unknown:
        raise ValueError(f"unknown execution counts: {sorted(unknown)}")
    _apply(execution_id, _current(attempt), {**counts, "progress_at": database_now()}, "record progress")
    db.session.commit()


def log_event(
    execution_id: int,
    attempt: int,
    kind: str,
    message: str,
    phase: ExecutionPhase | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    """Append a warning or counts event for the current attempt; refused once the attempt is stale."""
    _apply_to_attempt(execution_id, attempt, {"progress_at": database_now()}, "log an event")
    append_event(execution_id, attempt, kind, message, phase=phase, details=details)
    db.session.commit()


def _apply_to_attempt(execution_id: int, attempt: int, values: dict, action: str) -> None:
    """`_apply` for the current attempt, whose refusal says so."""
    transitions.apply(
        ExportExecution,
        [ExportExecution.id == execution_id, *_current(attempt)],
        values,
        f"workspace export {execution_id} cannot {action}: attempt {attempt} is not current",
    )


def succeed(execution_id: int, attempt: int, now: datetime | None = None) -> None:
    at = database_time(now)
    _apply_to_attempt(
        execution_id,
        attempt,
        {"status": ExecutionStatus.SUCCEEDED, "completed_at": at, "lease_expires_at": None, "progress_at": at},
        "succeed",
    )
    db.session.commit()


def fail(execution_id: int, attempt: int, code: ExecutionFailure, detail: str, now: datetime | None = None) -> None:
    """running → failed for the current attempt, with an `error` event."""
    at = database_time(now)
    _apply_to_attempt(
        execution_id,
        attempt,
        {
            "status": ExecutionStatus.FAILED,
            "failure_code": code,
            "failure_detail": detail[:DETAIL_LIMIT],
            "completed_at": at,
            "lease_expires_at": None,
        },
        "fail",
    )
    append_event(execution_id, attempt, "error", detail, details={"code": code})
    db.session.commit()


def _settle_active(
    execution_id: int, seen_attempt: int, code: ExecutionFailure, detail: str, now: datetime | None
) -> None:
    """queued, or running at the attempt the caller saw → failed with `code`, and an `error` event."""
    at = database_time(now)
    transitions.apply(
        ExportExecution,
        [
            ExportExecution.id == execution_id,
            ExportExecution.status.in_(ACTIVE_EXECUTION_STATUSES),
            ExportExecution.attempt_count == seen_attempt,
        ],
        {
            "status": ExecutionStatus.FAILED,
            "failure_code": code,
            "failure_detail": detail[:DETAIL_LIMIT],
            "completed_at": at,
            "lease_expires_at": None,
        },
        f"Workspace export {execution_id} is no longer queued or running at attempt {seen_attempt}; "
        "it finished or moved on, so it was left as it is.",
    )
    append_event(execution_id, seen_attempt, "error", detail, details={"code": code})


def settle_stalled(execution_id: int, seen_attempt: int, detail: str, now: datetime | None = None) -> None:
    """The watchdog's settlement of an execution whose worker died at every attempt it was given:
    running (at the attempt it saw) or queued → failed with `stalled`, so the workspace can
    export again."""
    _settle_active(execution_id, seen_attempt, ExecutionFailure.STALLED, detail, now)
    db.session.commit()


def stop_by_staff(execution_id: int, seen_attempt: int, detail: str, now: datetime | None = None) -> None:
    """Staff mark a stuck execution failed (`stopped_by_staff`). Not committed: the caller records
    the audit event, with the reason, in the same transaction."""
    _settle_active(execution_id, seen_attempt, ExecutionFailure.STOPPED_BY_STAFF, detail, now)


def cancel(execution_id: int, person_id: int | None, now: datetime | None = None) -> None:
    """queued → cancelled, before any attempt started. Not committed: the caller audits it first."""
    at = database_time(now)
    transitions.apply(
        ExportExecution,
        [ExportExecution.id == execution_id, ExportExecution.status == ExecutionStatus.QUEUED],
        {"status": ExecutionStatus.CANCELLED, "completed_at": at, "cancelled_by_id": person_id},
        "Only a queued export can be cancelled; this one has already started or finished.",
    )
    append_event(execution_id, 0, "cancelled", "Cancelled before it started.")
