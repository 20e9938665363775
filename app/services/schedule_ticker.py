"""The ticker: every minute, admit the due occurrences of active schedules (INV-05).

One indexed query (`ix_schedules_due`: status, next_occurrence_at) finds due schedules, in
batches taken with `FOR UPDATE SKIP LOCKED`, so tickers on several machines share the work
instead of repeating it. Within a batch each schedule gets its latest due occurrence admitted
(the earlier ones it missed while nothing ran are recorded on the run as skipped) and its
occurrence tracking moved, guarded on the `next_occurrence_at` this ticker read; the batch
commits once. The unique index on (schedule, occurrence time) is what makes an occurrence run
once: a run admitted meanwhile by "Run now" or by a ticker that skipped the lock is left alone
(ON CONFLICT DO NOTHING). The admitted runs are dispatched onto RQ right after the commit.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import or_, select
from sqlalchemy.dialects.postgresql import insert

from app.domain import schedule as schedule_domain
from app.domain.timetable import Timetable, due_occurrences, next_occurrence
from app.extensions import db
from app.models.schedule import RunStatus, RunTrigger, Schedule, ScheduleRun, ScheduleStatus
from app.models.types import utcnow
from app.services import schedule_runs

log = logging.getLogger(__name__)

BATCH_SIZE = 500
_JUST_BEFORE = timedelta(microseconds=1)


def tick(now: datetime | None = None, dispatch: bool = True) -> int:
    """Admit every due occurrence; returns how many schedules this ticker handled."""
    now = now or utcnow()
    handled = 0
    while True:
        admitted, count = _tick_batch(now)
        handled += count
        if dispatch and admitted:
            schedule_runs.dispatch_many(admitted)
        if count < BATCH_SIZE:
            return handled


def _tick_batch(now: datetime) -> tuple[list[int], int]:
    rows = db.session.execute(
        select(
            Schedule.id,
            Schedule.workspace_id,
            Schedule.timetable,
            Schedule.next_occurrence_at,
            Schedule.last_occurrence_at,
        )
        .where(
            Schedule.status == ScheduleStatus.ACTIVE,
            or_(Schedule.next_occurrence_at <= now, Schedule.next_occurrence_at.is_(None)),
        )
        .order_by(Schedule.next_occurrence_at.nulls_first(), Schedule.id)
        .limit(BATCH_SIZE)
        .with_for_update(skip_locked=True, of=Schedule)
    ).all()
    if not rows:
        db.session.rollback()
        return [], 0
    new_runs = []
    for row in rows:
        timetable = Timetable.from_json(row.timetable, "UTC")
        if row.next_occurrence_at is None:
            # Never planned (or its timetable was edited): the next occurrence counts from now.
            schedule_domain.record_occurrence(
                row.id, row.last_occurrence_at or now, next_occurrence(timetable, now), None
            )
            continue
        due = due_occurrences(timetable, row.next_occurrence_at - _JUST_BEFORE, now)
        if due.latest is not None:
            new_runs.append(
                {
                    "schedule_id": row.id,
                    "workspace_id": row.workspace_id,
                    "occurrence_at": due.latest,
                    "trigger": RunTrigger.TIMETABLE,
                    "skipped_occurrences": [moment.isoformat() for moment in due.skipped],
                    "status": RunStatus.QUEUED,
                    "attempt_count": 0,
                    "source_changed": False,
                    "created_at": now,
                }
            )
        schedule_domain.record_occurrence(
            row.id,
            due.latest or row.last_occurrence_at or now,
            next_occurrence(timetable, now),
            row.next_occurrence_at,
        )
    admitted: list[int] = []
    if new_runs:
        admitted = list(
            db.session.scalars(
                insert(ScheduleRun)
                .values(new_runs)
                .on_conflict_do_nothing(constraint="schedule_runs_occurrence_uidx")
                .returning(ScheduleRun.id)
            )
        )
    db.session.commit()
    return admitted, len(rows)
