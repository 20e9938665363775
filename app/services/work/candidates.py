"""The records a turn of the work engine may dispatch again, read from each kind's declaration
(`WorkKind.rows`): waiting ones whose dispatch may have been lost, and running ones whose
holder's lease lapsed. The engine (engine.py) asks Redis which of them to act on.

Both skip a record dispatched less than LOST_AFTER ago, when the kind's claim may have made that
dispatch for the state the record is in: its job may still be on its way into Redis.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from sqlalchemy import or_

from app.extensions import db
from app.models.types import lease_lapsed
from app.services.work import claims
from app.services.work.claims import BATCH
from app.services.work.work_kind import LOST_AFTER, Candidate, WorkKind


def lost(kind: WorkKind, now: datetime) -> list[Candidate]:
    """Records waiting for a job by `now` whose dispatch was made longer than LOST_AFTER before."""
    rows = kind.rows
    found = db.session.execute(
        rows.select(rows.record_id, rows.job_id)
        .where(rows.waiting(now), rows.dispatched_at < now - LOST_AFTER)
        .order_by(rows.record_id)
        .limit(BATCH)
    ).all()
    db.session.rollback()
    return [
        Candidate(record_id, job_id, partial(claims.dispatch, kind, record_id, job_id)) for record_id, job_id in found
    ]


def lapsed(kind: WorkKind, now: datetime) -> list[Candidate]:
    """Running records whose holder's lease lapsed by `now` (the clock leases are judged by), each
    fenced on its holder's attempt, with what the kind's retry policy counts of its attempts."""
    rows = kind.rows
    conditions = [rows.status == rows.running, lease_lapsed(rows.lease_expires_at, now)]
    if rows.claimed_while_running:
        conditions.append(or_(rows.dispatched_at.is_(None), rows.dispatched_at < now - LOST_AFTER))
    found = db.session.execute(
        rows.select(rows.record_id, rows.job_id, rows.attempt, rows.lease_holder)
        .where(*conditions)
        .order_by(rows.record_id)
        .limit(BATCH)
    ).all()
    db.session.rollback()
    return [
        Candidate(
            record_id,
            job_id,
            partial(claims.dispatch, kind, record_id, job_id),
            attempt=attempt,
            attempts_used=attempt if kind.attempts_used is None else kind.attempts_used(record_id, attempt),
            holder=holder,
        )
        for record_id, job_id, attempt, holder in found
    ]
