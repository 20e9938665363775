"""A run's one decision once its file is made, before any delivery row (to a recipient or to a
destination): send, or skip with its reason in words, by the schedule's send condition
(app/domain/schedules/send_conditions.py).

The decision is committed on the run (or, run as each recipient, on each access's file row) before
anything is sent or settled: a run delivered again keeps it, sending on (its rows are made once) or
settling as skipped, and never reconsiders. A run as each recipient decides on each access's file
for its people, and on the owner's file for its destinations, each on its own.
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
    """Decide for attempt `attempt` of an ordinary `run`, whose file `export` succeeded. True when
    the run is skipped (moved to `skipped`, not committed: the caller settles the schedule with it);
    False when it sends."""
    reason = owners_file_skip_reason(run, schedule, export, attempt)
    if reason is None:
        return False
    schedule_run.skip(run.id, attempt, export.row_count, export.rows_digest, reason)
    return True


def owners_file_skip_reason(run: ScheduleRun, schedule: Schedule, export: ExportFile, attempt: int) -> str | None:
    """The send condition applied to the run's own file, made with the owner's access (`export`,
    succeeded): None to send it, else why not in words. Decided once, recorded on the run (as an
    ordinary run's decision, so "only when changed" compares it with the last run that sent its own
    file), before any delivery row; a later attempt reads it back. An ordinary run sends that file to
    everyone; a run as each recipient only to its destinations."""
    if run.decision is not None:
        return run.skip_reason
    reason = send_conditions.skip_reason(
        schedule.send_condition, export.row_count or 0, export.rows_digest, _last_sent_if_compared(schedule, run)
    )
    schedule_run.decide(run.id, attempt, export.rows_digest, reason)
    return reason


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


def nothing_sent(recipients_files: list[str], destinations_file: str | None) -> str:
    """Why a run as each recipient that held back every file it decided on sent nothing, in words:
    the reasons its recipients' files were held back, then that of the owner's file for its
    destinations ("no recipient's file was sent (no rows); the owner's file was not sent to the
    destinations (no rows)")."""
    held_back = []
    if recipients_files:
        held_back.append(f"no recipient's file was sent ({'; '.join(dict.fromkeys(recipients_files))})")
    if destinations_file is not None:
        held_back.append(f"the owner's file was not sent to the destinations ({destinations_file})")
    return "; ".join(held_back)


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
