"""The schedule-run lifecycle (STATE-PFM-QRY-008): `queued → running → succeeded | failed | skipped`.

Every transition is one conditional UPDATE whose WHERE clause names the state it starts from,
and every transition after `start_attempt` names the attempt it acts for: an attempt that the
watchdog made stale (its lease lapsed and the run was redelivered) can change nothing. A
refused transition raises TransitionRefused. `start_attempt` and `renew_lease`
commit, because each is a fact the next process relies on; the attempt's outcomes
(`record_file`, `succeed`, `retry_later`, `fail`) do not: the run's processing commits each with
the rows that belong to it (the file it admitted, the schedule's failure streak).

A transient failure does not settle the run: the attempt ends and the run goes back to
`queued` with `next_attempt_at`, from which the work engine dispatches it again (its claim is
the engine's, app/services/work/claims.py, from the run's declaration).

A running run's next attempt starts only once its holder's lease lapsed (`start_attempt`), so a
live attempt, however late its job was delivered again or requeued, is never run beside another.
`held_by` is the same rule seen from a recipient row: the attempt still holds the run.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, and_, exists, literal, or_, update
from sqlalchemy.orm import InstrumentedAttribute

from app.domain import transitions
from app.domain.errors import TransitionRefused
from app.extensions import db, execute_dml
from app.models.schedule import RunDecision, RunStatus, ScheduleRun, ScheduleRunAttempt, ScheduleRunFile
from app.models.types import DETAIL_LIMIT, Moment, database_time, lease_live

# The error code of an attempt whose worker stopped (killed, frozen past its lease) before it ended.
WORKER_STOPPED = "worker_stopped"


# The length of schedule_runs.skip_reason.
SKIP_REASON_LIMIT = 200

# The guarded UPDATE of one run; returns its attempt number.
_apply = transitions.of_rows(ScheduleRun, "schedule run", ScheduleRun.attempt_count)


def start_attempt(run_id: int, holder: str, lease_expires_at: Moment, now: datetime | None = None) -> int:
    """queued → running once any retry delay has passed, or running → running on redelivery once
    the holder's lease lapsed (a live holder keeps the run, even when its job is delivered again).

    Appends the attempt row, ends an attempt left open by a dead worker, and takes the lease.
    Returns the attempt number. Times are the database's clock's unless the caller gives `now`.
    """
    at = database_time(now)
    number = _apply(
        run_id,
        [
            or_(
                and_(
                    ScheduleRun.status == RunStatus.QUEUED,
                    or_(ScheduleRun.next_attempt_at.is_(None), ScheduleRun.next_attempt_at <= at),
                ),
                and_(ScheduleRun.status == RunStatus.RUNNING, ~lease_live(ScheduleRun.lease_expires_at, now)),
            )
        ],
        {
            "status": RunStatus.RUNNING,
            "attempt_count": ScheduleRun.attempt_count + 1,
            "started_at": at,
            "next_attempt_at": None,
            "lease_holder": holder,
            "lease_expires_at": lease_expires_at,
        },
        "start an attempt",
    )
    db.session.execute(
        update(ScheduleRunAttempt)
        .where(ScheduleRunAttempt.run_id == run_id, ScheduleRunAttempt.ended_at.is_(None))
        .values(
            ended_at=at,
            outcome="failed",
            error_code=WORKER_STOPPED,
            error_detail="The worker running this attempt stopped (it was killed or its machine went away).",
        )
    )
    db.session.add(ScheduleRunAttempt(run_id=run_id, number=number, started_at=at))
    db.session.commit()
    return number


def _current(attempt: int) -> list:
    return [ScheduleRun.status == RunStatus.RUNNING, ScheduleRun.attempt_count == attempt]


def held_by(
    run_id: ColumnElement[int] | InstrumentedAttribute[int], attempt: int, now: datetime | None = None
) -> ColumnElement[bool]:
    """The SQL condition "attempt `attempt` of run `run_id` still holds it at `now`" (by the
    database's clock when no `now` is given): the run is running at that attempt and its lease has
    not lapsed. While it holds, no newer attempt can start, so whatever this attempt claimed stays
    its own."""
    return exists().where(
        ScheduleRun.id == run_id,
        *_current(attempt),
        lease_live(ScheduleRun.lease_expires_at, now),
    )


def renew_lease(run_id: int, attempt: int, lease_expires_at: Moment) -> None:
    _apply(run_id, _current(attempt), {"lease_expires_at": lease_expires_at}, "renew its lease")
    db.session.commit()


def record_file(run_id: int, attempt: int, export_id: int, source_changed: bool) -> None:
    """The file this attempt admitted; committed together with the file's own admission."""
    _apply(run_id, _current(attempt), {"export_id": export_id, "source_changed": source_changed}, "record its file")
    _end_attempt_values(run_id, attempt, export_id=export_id)


def _end_attempt_values(run_id: int, attempt: int, **values) -> None:
    db.session.execute(
        update(ScheduleRunAttempt)
        .where(and_(ScheduleRunAttempt.run_id == run_id, ScheduleRunAttempt.number == attempt))
        .values(**values)
    )


def succeed(run_id: int, attempt: int, row_count: int | None, now: datetime | None = None) -> None:
    """running → succeeded for the current attempt. Not committed."""
    at = database_time(now)
    _apply(
        run_id,
        _current(attempt),
        {"status": RunStatus.SUCCEEDED, "row_count": row_count, "completed_at": at, "lease_expires_at": None},
        "succeed",
    )
    _end_attempt_values(run_id, attempt, ended_at=at, outcome="succeeded")


def _decision(skip_reason: str | None, rows_digest: str | None) -> dict:
    """The columns a send condition's decision on a file writes: send, or skip with the reason."""
    return {
        "decision": RunDecision.SEND if skip_reason is None else RunDecision.SKIP,
        "skip_reason": None if skip_reason is None else skip_reason[:SKIP_REASON_LIMIT],
        "rows_digest": rows_digest,
    }


def decide(run_id: int, attempt: int, rows_digest: str | None, skip_reason: str | None) -> None:
    """The send condition's decision on the run's own file (the owner's): send it, or hold it back
    with `skip_reason` in words. Recorded with its rows' digest before any delivery row is made, so
    a later attempt keeps it. Held back, an ordinary run is then `skip`ped; a run as each recipient
    goes on for its recipients, and only its destinations get nothing. Committed."""
    _apply(
        run_id,
        [*_current(attempt), ScheduleRun.decision.is_(None)],
        _decision(skip_reason, rows_digest),
        "decide",
    )
    db.session.commit()


def skip(
    run_id: int, attempt: int, row_count: int | None, rows_digest: str | None, reason: str, now: datetime | None = None
) -> None:
    """running → skipped for the current attempt, before any delivery row: the file was made and
    the send condition says why nothing is sent. A run that decided to send its own file (to its
    recipients or its destinations) sent something and is never skipped. Not committed."""
    at = database_time(now)
    _apply(
        run_id,
        [*_current(attempt), or_(ScheduleRun.decision.is_(None), ScheduleRun.decision == RunDecision.SKIP)],
        {
            "status": RunStatus.SKIPPED,
            "decision": RunDecision.SKIP,
            "skip_reason": reason[:SKIP_REASON_LIMIT],
            "rows_digest": rows_digest,
            "row_count": row_count,
            "completed_at": at,
            "lease_expires_at": None,
        },
        "skip",
    )
    _end_attempt_values(run_id, attempt, ended_at=at, outcome="succeeded")


def record_recipient_file(run_file_id: int, run_id: int, attempt: int, export_id: int) -> None:
    """The file attempt `attempt` admitted for one access of a run as each recipient. Not committed."""
    _apply_to_file(run_file_id, run_id, attempt, [], {"export_id": export_id}, "record its file")


def decide_recipient_file(
    run_file_id: int, run_id: int, attempt: int, skip_reason: str | None, row_count: int | None, rows_digest: str | None
) -> None:
    """Send one access's file, or skip it with the reason in words: decided once, before any of its
    recipients' rows. Committed."""
    _apply_to_file(
        run_file_id,
        run_id,
        attempt,
        [ScheduleRunFile.decision.is_(None)],
        {**_decision(skip_reason, rows_digest), "row_count": row_count},
        "decide",
    )
    db.session.commit()


def _apply_to_file(run_file_id: int, run_id: int, attempt: int, guards: list, values: dict, action: str) -> None:
    """One guarded UPDATE of a run's file row, only while attempt `attempt` holds the run."""
    result = execute_dml(
        update(ScheduleRunFile)
        .where(
            ScheduleRunFile.id == run_file_id,
            ScheduleRunFile.run_id == run_id,
            held_by(literal(run_id), attempt),
            *guards,
        )
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:
        raise TransitionRefused(f"Run {run_id} attempt {attempt} may no longer {action} its file {run_file_id}.")


def retry_later(run_id: int, attempt: int, code: str, detail: str, next_attempt_at: datetime) -> None:
    """End a transiently failed attempt; the run waits in `queued` until `next_attempt_at`. Not committed."""
    _apply(
        run_id,
        _current(attempt),
        {
            "status": RunStatus.QUEUED,
            "next_attempt_at": next_attempt_at,
            "lease_expires_at": None,
            # A new dispatch is made once the delay has passed.
            "dispatched_at": None,
            "job_id": None,
        },
        "wait for a retry",
    )
    _end_attempt_values(
        run_id,
        attempt,
        ended_at=database_time(None),
        outcome="failed",
        error_code=code,
        error_detail=detail[:DETAIL_LIMIT],
    )


def fail(run_id: int, attempt: int, code: str, detail: str, now: datetime | None = None) -> None:
    """running → failed for the current attempt. Not committed."""
    at = database_time(now)
    _apply(
        run_id,
        _current(attempt),
        {
            "status": RunStatus.FAILED,
            "failure_code": code,
            "failure_detail": detail[:DETAIL_LIMIT],
            "completed_at": at,
            "lease_expires_at": None,
        },
        "fail",
    )
    _end_attempt_values(
        run_id, attempt, ended_at=at, outcome="failed", error_code=code, error_detail=detail[:DETAIL_LIMIT]
    )
