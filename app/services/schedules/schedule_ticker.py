"""The ticker: every minute, admit the due occurrences of active schedules (INV-05).

Indexed queries (`ix_schedules_due`: status, next_occurrence_at) find due schedules, in
batches taken with `FOR UPDATE SKIP LOCKED`, so tickers on several machines share the work
instead of repeating it. Within a batch each schedule gets its latest due occurrence admitted
(the earlier ones it missed while nothing ran are recorded on the run as skipped) and its
occurrence tracking moved, guarded on the `next_occurrence_at` this ticker read; the batch
commits once. The unique index on (schedule, occurrence time) is what makes an occurrence run
once: a run admitted meanwhile by "Run now" or by a ticker that skipped the lock is left alone
(ON CONFLICT DO NOTHING). On PostgreSQL the runs are inserted already claimed by their jobs
(`claims.claim_on_insert`), committed with the batch; the jobs are enqueued right after the commit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, ColumnElement, Integer, String, Text, cast, func, literal, select
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.types import TypeEngine

from app.domain.schedules import schedule_lifecycle
from app.domain.timing.timetable import Due, Timetable, due_occurrences, next_occurrence
from app.extensions import array_rows, db, insert_ignoring_duplicates
from app.models.schedule import RunStatus, RunTrigger, Schedule, ScheduleRun, ScheduleStatus
from app.models.types import UTCDateTime, utcnow
from app.services.schedules.run_work import RUNS
from app.services.work import claims
from app.services.work.work_kind import job_id

log = logging.getLogger(__name__)

BATCH_SIZE = 500
# What every run the timetable admits starts with.
_FIXED_RUN_VALUES = {
    "trigger": RunTrigger.TIMETABLE.value,
    "status": RunStatus.QUEUED.value,
    "attempt_count": 0,
    "source_changed": False,
}
_JUST_BEFORE = timedelta(microseconds=1)


def tick(now: datetime | None = None, dispatch: bool = True) -> int:
    """Admit every due occurrence; returns how many schedules this ticker handled."""
    now = now or utcnow()
    handled = 0
    # Schedules never planned first, then the due ones oldest first: each a range of
    # ix_schedules_due read in its order, so a batch costs the same with 500 or 100,000 waiting (one
    # query for both, ordered NULLS FIRST, sorted every due schedule again for each batch).
    for waiting, oldest_first in (
        (Schedule.next_occurrence_at.is_(None), Schedule.id),
        (Schedule.next_occurrence_at <= now, Schedule.next_occurrence_at),
    ):
        while True:
            admitted, count = _tick_batch(now, waiting, oldest_first, dispatch)
            handled += count
            if dispatch and admitted:
                claims.enqueue_claims(RUNS, [(run_id, job) for run_id, job in admitted if job is not None])
                claims.dispatch_many(RUNS, [run_id for run_id, job in admitted if job is None])
            if count < BATCH_SIZE:
                break
    return handled


def _tick_batch(
    now: datetime, waiting: ColumnElement[bool], oldest_first: InstrumentedAttribute, claim: bool
) -> tuple[list[tuple[int, str | None]], int]:
    rows = db.session.execute(
        select(
            Schedule.id,
            Schedule.workspace_id,
            Schedule.timetable,
            Schedule.next_occurrence_at,
            Schedule.last_occurrence_at,
        )
        .where(Schedule.status == ScheduleStatus.ACTIVE, waiting)
        .order_by(oldest_first)
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
                    "skipped_occurrences": [moment.isoformat() for moment in due.skipped],
                }
            )
        moves.append((row.id, due.latest or row.last_occurrence_at or now, following, row.next_occurrence_at))
    # The rows are locked by this transaction, so every guarded move applies.
    schedule_lifecycle.record_occurrences(moves)
    admitted = _admit(new_runs, now, claim)
    db.session.commit()
    return admitted, len(rows)


def _admit(new_runs: list[dict], now: datetime, claim: bool) -> list[tuple[int, str | None]]:
    """Insert the batch's runs in one statement; ON CONFLICT leaves an admitted occurrence alone.
    Returns each run inserted with the job that claimed it (`claim`, on PostgreSQL), else None."""
    if not new_runs:
        return []
    runs = ScheduleRun.__table__
    statement = insert_ignoring_duplicates(runs, ["schedule_id", "occurrence_at"]).returning(runs.c.id, runs.c.job_id)
    fixed = {**_FIXED_RUN_VALUES, "created_at": now}
    if db.engine.dialect.name != "postgresql":
        # SQLite (the one-machine default) has no arrays nor sequences: one VALUES row per run
        # (insertmanyvalues), claimed by the dispatch after the commit.
        return [(run_id, None) for run_id, _ in db.session.execute(statement, [{**run, **fixed} for run in new_runs])]
    jobs: dict[str, tuple[TypeEngine[Any], Sequence[Any]]] = {}
    if claim:
        # Each run's id taken first, so that its job's id is known when it is inserted.
        ids = db.session.scalars(
            select(func.nextval(func.pg_get_serial_sequence(runs.name, "id"))).select_from(
                func.generate_series(1, len(new_runs))
            )
        ).all()
        jobs = {"id": (Integer(), ids), "job_id": (String(), [job_id(RUNS.slug, run_id) for run_id in ids])}
    given = array_rows(
        "due",
        **jobs,
        schedule_id=(Integer(), [run["schedule_id"] for run in new_runs]),
        workspace_id=(Integer(), [run["workspace_id"] for run in new_runs]),
        occurrence_at=(UTCDateTime(), [run["occurrence_at"] for run in new_runs]),
        skipped_occurrences=(Text(), [json.dumps(run["skipped_occurrences"]) for run in new_runs]),
    )
    claimed = {"id": given.c.id, **claims.claim_on_insert(RUNS, given.c.job_id)} if claim else {}
    chosen = select(
        given.c.schedule_id,
        given.c.workspace_id,
        given.c.occurrence_at,
        cast(given.c.skipped_occurrences, JSON),
        *(literal(value, runs.c[name].type) for name, value in fixed.items()),
        *claimed.values(),
    )
    columns = ["schedule_id", "workspace_id", "occurrence_at", "skipped_occurrences", *fixed, *claimed]
    return [(run_id, job) for run_id, job in db.session.execute(statement.from_select(columns, chosen))]


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
