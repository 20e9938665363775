"""The one claim of every kind of background work, and the dispatches made of it: claim, then
enqueue (app/services/work/queue.py), from the kind's declaration (`WorkKind.rows`).

A claim is one guarded UPDATE of the record's claim row: it names the new job and the moment of
the dispatch (the database's clock), from the job id the dispatcher saw (none for a record never
dispatched), while the record may still take a job. Two dispatchers that saw the same job id
cannot both claim: the first changes the job id the second's guard names. Every job id is new
(`work_kind.job_id`), so the job id seen says as much as a dispatch count would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Integer, String, case, update

from app.domain import transitions
from app.extensions import array_rows, db
from app.models.types import Moment, database_clock, database_now, database_time
from app.services.work.queue import ClaimedJob, WorkPriority, claim_and_enqueue, enqueue_claimed
from app.services.work.work_kind import WorkKind, job_id

# The most records one turn dispatches of one kind; the next turn takes the rest.
BATCH = 500


def dispatch(kind: WorkKind, record_id: int, seen_job_id: str | None) -> bool:
    """Claim the record's dispatch from the job id the caller saw, commit, then enqueue.

    False when another dispatcher claimed it first, when it may no longer take a job, or when the
    enqueue failed (the claim stands; the lost-job turn dispatches it again).
    """
    job = _job(kind, record_id, job_id(kind.slug, record_id))
    return claim_and_enqueue(lambda: claim(kind, record_id, seen_job_id, job.job_id), job)


def claim(
    kind: WorkKind, record_id: int, seen_job_id: str | None, new_job_id: str, now: datetime | None = None
) -> None:
    """Record that `new_job_id` carries the record, from the job id the dispatcher saw, at `now`
    (the database's clock, read in the statement, unless given). Committed: the job is enqueued
    only after this. TransitionRefused otherwise."""
    rows = kind.rows
    at = database_time(now)
    seen = rows.job_id.is_(None) if seen_job_id is None else rows.job_id == seen_job_id
    transitions.apply(
        rows.claims,
        [rows.record_key == record_id, seen, rows.of_record(rows.may_claim(at))],
        _claim_values(kind, new_job_id, at),
        f"{kind.label} {record_id} cannot be dispatched now",
    )
    db.session.commit()


def dispatch_many(kind: WorkKind, record_ids: Sequence[int]) -> int:
    """Dispatch records never dispatched (an admission's batch, a turn's): their claims in one
    statement, then their jobs in one Redis round trip. Returns how many are on the queue."""
    return enqueue_claims(
        kind, _claim_fresh(kind, {record_id: job_id(kind.slug, record_id) for record_id in record_ids})
    )


def enqueue_claims(kind: WorkKind, claimed: Sequence[tuple[int, str]]) -> int:
    """Enqueue, in one Redis round trip, the jobs of committed claims, each (record id, job id).
    Returns how many are on the queue."""
    return enqueue_claimed([_job(kind, record_id, claimed_job_id) for record_id, claimed_job_id in claimed])


def claim_on_insert(kind: WorkKind, new_job_id: ColumnElement[str]) -> dict[str, Any]:
    """The claim's columns for records inserted already claimed by the jobs `new_job_id` names, at
    the database's clock: an admission that dispatches what it admits commits each claim with its
    record, so no dispatcher ever sees the record unclaimed, and no second write of every row
    records the claim. Only for a kind whose claims are on the record's own row and uncounted."""
    rows = kind.rows
    if rows.claims is not rows.model or rows.dispatch_count is not None:
        raise ValueError(
            f"{kind.label} records are claimed on a row of their own or counted; claim them after inserting"
        )
    return _claim_values(kind, new_job_id, database_now())


def _claim_fresh(kind: WorkKind, job_ids: Mapping[int, str]) -> list[tuple[int, str]]:
    """`claim` for records never dispatched, each for the job id `job_ids` gives it. Returns the
    (record id, job id) pairs claimed. Committed."""
    if not job_ids:
        return []
    rows = kind.rows
    new_job_id: ColumnElement[str]
    if db.engine.dialect.name == "postgresql":
        given = array_rows("given", record_key=(Integer(), list(job_ids)), job_id=(String(), list(job_ids.values())))
        chosen, new_job_id = rows.record_key == given.c.record_key, given.c.job_id
    else:
        # SQLite (the one-machine default) has no arrays: a CASE naming each record's job id.
        chosen, new_job_id = rows.record_key.in_(list(job_ids)), case(dict(job_ids), value=rows.record_key)
    claimed = db.session.execute(
        update(rows.claims)
        .where(chosen, rows.job_id.is_(None), rows.of_record(rows.may_claim(database_now())))
        .values(_claim_values(kind, new_job_id, database_now()))
        .returning(rows.record_key, rows.job_id)
        .execution_options(synchronize_session=False)
    ).all()
    db.session.commit()
    return [(record_id, claimed_job_id) for record_id, claimed_job_id in claimed]


def _claim_values(kind: WorkKind, new_job_id: object, at: Moment) -> dict[str, object]:
    rows = kind.rows
    values: dict[str, object] = {rows.job_id.key: new_job_id, rows.dispatched_at.key: at}
    if rows.dispatch_count is not None:
        values[rows.dispatch_count.key] = rows.dispatch_count + 1
    return values


def dispatch_pending(kind: WorkKind, now: datetime | None = None) -> int:
    """Enqueue the kind's records waiting for a job by `now` (the database's clock unless given)
    and never dispatched (or whose retry's dispatch was cleared)."""
    now = now or database_clock()
    rows = kind.rows
    pending = db.session.scalars(
        rows.select(rows.record_id)
        .where(rows.waiting(now), rows.dispatched_at.is_(None))
        .order_by(rows.record_id)
        .limit(BATCH)
    ).all()
    db.session.rollback()
    return dispatch_many(kind, pending)


def _job(kind: WorkKind, record_id: int, claimed_job_id: str) -> ClaimedJob:
    return ClaimedJob(
        kind.job_function, record_id, claimed_job_id, f"{kind.label.lower()} {record_id}", _priority(kind, record_id)
    )


def _priority(kind: WorkKind, record_id: int) -> WorkPriority:
    return kind.priority_of(record_id) if kind.priority_of is not None else kind.priority
