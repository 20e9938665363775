"""A run's one decision once its file is made, before any delivery row (to a recipient or to a
destination): send, or skip with its reason in words, by the schedule's send condition
(app/domain/schedules/send_conditions.py).

The decision is committed on the run before anything is sent: a run delivered again after it
decided to send keeps sending (its rows are made once), and a skipped run is settled at once, so
no later attempt reconsiders either.
"""

from __future__ import annotations

from sqlalchemy import and_, func, literal, select, tuple_
from sqlalchemy.orm import aliased

from app.domain.schedules import schedule_run, send_conditions
from app.domain.schedules.send_conditions import LastSent
from app.extensions import db
from app.models import ExportFile
from app.models.schedule import RunDecision, RunStatus, Schedule, ScheduleRun, ScheduleRunFile


def skipped(run: ScheduleRun, schedule: Schedule, export: ExportFile, attempt: int) -> bool:
    """Decide for attempt `attempt` of `run`, whose file `export` succeeded. True when the run is
    skipped (moved to `skipped`, not committed: the caller settles the schedule with it); False when
    it sends (recorded and committed, or decided by an earlier attempt)."""
    if run.decision == RunDecision.SEND:
        return False
    reason = send_conditions.skip_reason(
        schedule.send_condition, export.row_count or 0, export.rows_digest, _last_sent_if_compared(schedule, run)
    )
    if reason is None:
        schedule_run.decide_to_send(run.id, attempt, export.rows_digest)
        return False
    schedule_run.skip(run.id, attempt, export.row_count, export.rows_digest, reason)
    return True


def recipient_file_skip_reason(
    run: ScheduleRun, schedule: Schedule, run_file: ScheduleRunFile, export: ExportFile, attempt: int
) -> str | None:
    """Run as each recipient: the send condition applied to one access's file (its decision is
    recorded once, before its recipients' rows); the reason in words when it is skipped."""
    if run_file.decision is not None:
        return run_file.skip_reason
    reason = send_conditions.skip_reason(
        schedule.send_condition,
        export.row_count or 0,
        export.rows_digest,
        _last_sent_if_compared(schedule, run, run_file.access_key),
    )
    schedule_run.decide_recipient_file(run_file.id, run.id, attempt, reason, export.row_count, export.rows_digest)
    return reason


def _last_sent_if_compared(schedule: Schedule, run: ScheduleRun, access_key: str | None = None) -> LastSent | None:
    """`last_sent`, looked up only for a condition that compares with it."""
    return last_sent(run, access_key) if send_conditions.compares_with_last_sent(schedule.send_condition) else None


def last_sent(run: ScheduleRun, access_key: str | None = None) -> LastSent | None:
    """The schedule's latest run before `run` (in the run history's order: occurrence, then id) that
    sent and did not fail, with its number in that history and the digest it sent: the run's own,
    or, with `access_key`, that of its file for that access (run as each recipient)."""
    statement = (
        select(ScheduleRun.id, ScheduleRun.occurrence_at, ScheduleRun.rows_digest)
        if access_key is None
        else select(ScheduleRun.id, ScheduleRun.occurrence_at, ScheduleRunFile.rows_digest).join(
            ScheduleRunFile, ScheduleRunFile.run_id == ScheduleRun.id
        )
    )
    sent = (
        ScheduleRun.decision == RunDecision.SEND
        if access_key is None
        else and_(ScheduleRunFile.access_key == access_key, ScheduleRunFile.decision == RunDecision.SEND)
    )
    found = db.session.execute(
        statement.where(
            ScheduleRun.schedule_id == run.schedule_id,
            ScheduleRun.workspace_id == run.workspace_id,
            sent,
            ScheduleRun.status != RunStatus.FAILED,
            tuple_(ScheduleRun.occurrence_at, ScheduleRun.id) < tuple_(literal(run.occurrence_at), literal(run.id)),
        )
        .order_by(ScheduleRun.occurrence_at.desc(), ScheduleRun.id.desc())
        .limit(1)
    ).first()
    if found is None:
        return None
    earlier = aliased(ScheduleRun)
    number = db.session.scalar(
        select(func.count()).where(
            earlier.schedule_id == run.schedule_id,
            tuple_(earlier.occurrence_at, earlier.id) <= tuple_(literal(found.occurrence_at), literal(found.id)),
        )
    )
    return LastSent(number or 0, found.rows_digest)
