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

import json
import logging
from datetime import datetime, timedelta

from sqlalchemy import or_, select

from app.domain.schedules import schedule_lifecycle
from app.domain.timing.timetable import Due, Timetable, due_occurrences, next_occurrence
from app.extensions import db, insert_ignoring_duplicates
from app.models.schedule import RunStatus, RunTrigger, Schedule, ScheduleRun, ScheduleStatus
from app.models.types import utcnow
from app.services.schedules.run_work import RUNS
from app.services.work import claims

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
            claims.dispatch_many(RUNS, admitted)
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
    moves = []
    plan = _Planner(now)
    for row in rows:
        if row.next_occurrence_at is None:
            # Never planned (or its timetable was edited): the next occurrence counts from now.
            schedule_lifecycle.record_occurrence(
                row.id, row.last_occurrence_at or now, plan.next_after_now(row.timetable), None
            )
            continue
        due, following = plan.due(row.timetable, row.next_occurrence_at)
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
        moves.append((row.id, due.latest or row.last_occurrence_at or now, following, row.next_occurrence_at))
    # The rows are locked by this transaction, so every guarded move applies.
    schedule_lifecycle.record_occurrences(moves)
    admitted: list[int] = []
    if new_runs:
        # One statement for the batch (insertmanyvalues); ON CONFLICT leaves an admitted occurrence alone.
        admitted = list(
            db.session.scalars(
                insert_ignoring_duplicates(ScheduleRun.__table__, ["schedule_id", "occurrence_at"]).returning(
                    ScheduleRun.__table__.c.id
                ),
                new_runs,
            )
        )
    db.session.commit()
    return admitted, len(rows)


class _Planner:
    """Occurrences worked out once per distinct timetable in a batch: many schedules share one
    ("daily at 07:00 in the workspace's zone"), and working them out is the ticker's main cost."""

    def __init__(self, now: datetime):
        self._now = now
        self._timetables: dict[str, Timetable] = {}
        self._due: dict[tuple[str, datetime], tuple[Due, datetime | None]] = {}

    def _timetable(self, data: dict) -> tuple[str, Timetable]:
        key = json.dumps(data, sort_keys=True)
        if key not in self._timetables:
            self._timetables[key] = Timetable.from_json(data, "UTC")
        return key, self._timetables[key]

    def next_after_now(self, data: dict) -> datetime | None:
        return next_occurrence(self._timetable(data)[1], self._now)

    def due(self, data: dict, next_occurrence_at: datetime) -> tuple[Due, datetime | None]:
        """The due occurrences from `next_occurrence_at` on, and the occurrence after now."""
        key, timetable = self._timetable(data)
        if (key, next_occurrence_at) not in self._due:
            self._due[key, next_occurrence_at] = (
                due_occurrences(timetable, next_occurrence_at - _JUST_BEFORE, self._now),
                next_occurrence(timetable, self._now),
            )
        return self._due[key, next_occurrence_at]
