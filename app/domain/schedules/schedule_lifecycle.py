"""The schedule's own lifecycle (STATE-PFM-QRY-007): `active ⇄ paused`, with the pause reason.

Each change is one conditional UPDATE whose WHERE clause carries the state it starts from, so a
person pressing "Pause", a run pausing after its third failure and a ticker moving the next
occurrence can race without losing an update. A refused change raises TransitionRefused.

Run processing calls only `record_occurrence`, `record_run_outcome` and `pause` (with an
automatic reason): it never edits the definition (INV-08).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import text, update

from app.domain import transitions
from app.extensions import db, execute_dml
from app.models.schedule import PauseReason, Schedule, ScheduleStatus
from app.models.types import database_now, database_time

#: Consecutive failed runs after which a schedule pauses itself.
FAILURE_STREAK_LIMIT = 3


_apply = transitions.of_rows(Schedule, "schedule")


def pause(schedule_id: int, reason: PauseReason, now: datetime | None = None) -> None:
    """active → paused with `reason`. Not committed: the caller commits it with its audit event."""
    _apply(
        schedule_id,
        [Schedule.status == ScheduleStatus.ACTIVE],
        {"status": ScheduleStatus.PAUSED, "pause_reason": reason, "paused_at": database_time(now)},
        "pause",
    )


def pause_those_sending_report(workspace_id: int, report_id: int, now: datetime | None = None) -> list[int]:
    """Every active schedule of the report → paused with `source_removed`; their ids. Not committed."""
    paused_at = database_time(now)
    return list(
        db.session.scalars(
            update(Schedule)
            .where(
                Schedule.workspace_id == workspace_id,
                Schedule.report_id == report_id,
                Schedule.status == ScheduleStatus.ACTIVE,
            )
            .values(status=ScheduleStatus.PAUSED, pause_reason=PauseReason.SOURCE_REMOVED, paused_at=paused_at)
            .returning(Schedule.id)
            .execution_options(synchronize_session=False)
        )
    )


def resume(schedule_id: int, reason: PauseReason, next_occurrence_at: datetime | None) -> None:
    """paused (for `reason`) → active, with the next occurrence counted from now.

    The caller has checked that the cause is gone; naming the reason it saw means a schedule
    paused again meanwhile for another reason stays paused. The failure streak starts over.
    """
    _apply(
        schedule_id,
        [Schedule.status == ScheduleStatus.PAUSED, Schedule.pause_reason == reason],
        {
            "status": ScheduleStatus.ACTIVE,
            "pause_reason": None,
            "paused_at": None,
            "failure_streak": 0,
            "next_occurrence_at": next_occurrence_at,
        },
        "resume",
    )


def record_occurrence(
    schedule_id: int, admitted_at: datetime, next_occurrence_at: datetime | None, seen_next: datetime | None
) -> None:
    """Move the occurrence tracking past `admitted_at`, but only from the `next_occurrence_at` the
    ticker read (`seen_next`), so two tickers cannot both move it."""
    _apply(
        schedule_id,
        [Schedule.next_occurrence_at == seen_next]
        if seen_next is not None
        else [Schedule.next_occurrence_at.is_(None)],
        {"last_occurrence_at": admitted_at, "next_occurrence_at": next_occurrence_at},
        "record an occurrence",
    )


def record_run_outcome(schedule_id: int, failed: bool, now: datetime | None = None) -> bool:
    """Count a settled run in the failure streak: the schedule's latest runs that failed, in a row.

    A failed run extends it, and the `FAILURE_STREAK_LIMIT`-th in a row pauses an active schedule
    with `failure_streak`. Any other settled run ends the row and the streak goes back to 0: one
    that succeeded, and one whose file a person cancelled (their choice, not the schedule
    failing; the caller passes `failed=False` for it). Returns True when this outcome paused the
    schedule. Not committed."""
    if not failed:
        db.session.execute(update(Schedule).where(Schedule.id == schedule_id).values(failure_streak=0))
        return False
    db.session.execute(
        update(Schedule).where(Schedule.id == schedule_id).values(failure_streak=Schedule.failure_streak + 1)
    )
    result = execute_dml(
        update(Schedule)
        .where(
            Schedule.id == schedule_id,
            Schedule.status == ScheduleStatus.ACTIVE,
            Schedule.failure_streak >= FAILURE_STREAK_LIMIT,
        )
        .values(status=ScheduleStatus.PAUSED, pause_reason=PauseReason.FAILURE_STREAK, paused_at=database_time(now))
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def transfer_ownership(schedule_id: int, from_owner_id: int, to_owner_id: int) -> None:
    """Give the schedule a new owner, from the owner the person saw. Not committed: the caller
    commits it with its audit event."""
    _apply(
        schedule_id,
        [Schedule.owner_id == from_owner_id],
        {"owner_id": to_owner_id, "version": Schedule.version + 1, "updated_at": database_now()},
        "change owner",
    )


def record_occurrences(moves: list[tuple[int, datetime, datetime | None, datetime]]) -> int:
    """`record_occurrence` for a ticker's batch in one statement: each (schedule id, admitted_at,
    next_occurrence_at, seen_next) moves only from the `seen_next` the ticker read. Returns how
    many moved; a schedule someone else moved meanwhile stays as it is. Not committed."""
    if not moves:
        return 0
    if db.engine.dialect.name != "postgresql":
        # SQLite (the one-machine default) has no arrays: the same guard, one row at a time.
        return sum(
            execute_dml(
                update(Schedule)
                .where(Schedule.id == schedule_id, Schedule.next_occurrence_at == seen_next)
                .values(last_occurrence_at=admitted_at, next_occurrence_at=next_at)
                .execution_options(synchronize_session=False)
            ).rowcount
            for schedule_id, admitted_at, next_at, seen_next in moves
        )
    ids, admitted, following, seen = (list(column) for column in zip(*moves, strict=True))
    result = execute_dml(
        text(
            "UPDATE schedules AS s SET last_occurrence_at = m.admitted_at, next_occurrence_at = m.next_at"
            " FROM unnest(CAST(:ids AS integer[]), CAST(:admitted AS timestamptz[]),"
            " CAST(:following AS timestamptz[]), CAST(:seen AS timestamptz[]))"
            " AS m(id, admitted_at, next_at, seen_next)"
            " WHERE s.id = m.id AND s.next_occurrence_at = m.seen_next"
        ),
        {"ids": ids, "admitted": admitted, "following": following, "seen": seen},
    )
    return result.rowcount
