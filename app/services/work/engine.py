"""The periodic entry points of the work engine, each one turn over every registered kind, and
the lookup from a job to the kind and record it works on (docs/architecture.md "The work engine").

A kind's turn that fails (Redis down, the database briefly unreachable) is logged and the turn
goes on to the next kind: one kind's trouble never holds up the others' work. Every turn is
idempotent and safe on several machines at once: the claims in the database decide.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from functools import partial

from rq.job import Job

from app.extensions import db
from app.services.work import candidates, claims
from app.services.work.kinds import WORK_KINDS
from app.services.work.queue import redis_connection
from app.services.work.work_kind import Candidate, WorkKind, dispatch_is_waiting, job_is_lost

log = logging.getLogger(__name__)

# One turn of one kind: what it enqueued (or settled) by `now`.
Turn = Callable[[datetime], int]


def dispatch_pending(now: datetime) -> int:
    """Enqueue every kind's records never dispatched, or whose retry is due."""
    return _turn("dispatch pending", lambda kind: partial(claims.dispatch_pending, kind), now)


def redispatch_lost(now: datetime) -> int:
    """Dispatch again every kind's queued records whose job Redis lost (flushed, failed, a dead
    worker's), once LOST_AFTER passed since their dispatch."""
    return _turn("redispatch lost", _redispatch_lost_of, now)


def redeliver_lapsed(now: datetime) -> int:
    """Every kind's running records whose holder's lease lapsed: dispatched again (at once, or
    after the kind's backoff), or given up once out of attempts."""
    return _turn("redeliver lapsed", _redeliver_lapsed_of, now)


def _redispatch_lost_of(kind: WorkKind) -> Turn:
    def turn(now: datetime) -> int:
        lost = candidates.lost(kind, now)
        if not lost:
            return 0
        connection = redis_connection()
        return sum(candidate.dispatch() for candidate in lost if job_is_lost(connection, candidate.job_id))

    return turn


def _redeliver_lapsed_of(kind: WorkKind) -> Turn:
    def turn(now: datetime) -> int:
        lapsed = candidates.lapsed(kind, now)
        if not lapsed:
            return 0
        connection = redis_connection()
        handled = 0
        for candidate in lapsed:
            if dispatch_is_waiting(connection, candidate.job_id, candidate.holder):
                continue  # the redelivery already made is about to start the record itself
            handled += _redeliver(kind, candidate, now)
        return handled

    return turn


def _redeliver(kind: WorkKind, candidate: Candidate, now: datetime) -> bool:
    """Give the lapsed record up, or start it again as its kind's retry policy says."""
    if kind.retries.exhausted(candidate.attempts_used):
        settled = kind.give_up(candidate, now)
        if settled:
            log.warning("%s %s given up after %s attempts", kind.name, candidate.record_id, candidate.attempts_used)
        return settled
    log.warning(
        "%s %s: its holder %s stopped renewing its lease at attempt %s; delivering it again",
        kind.name,
        candidate.record_id,
        candidate.holder or "(unknown)",
        candidate.attempt,
    )
    delay = kind.retries.delay_after(candidate.attempts_used)
    if delay and kind.retry_later is not None:
        return kind.retry_later(candidate, now, now + delay)
    return candidate.dispatch()


def _turn(concern: str, turn_of: Callable[[WorkKind], Turn], now: datetime) -> int:
    handled = 0
    for kind in WORK_KINDS:
        try:
            handled += turn_of(kind)(now)
        except Exception:  # the other kinds' work goes on; this kind's is retried next turn
            db.session.rollback()
            log.exception("work engine: %s failed for %s; it runs again at the next turn", concern, kind.name)
    return handled


def kind_of(function_name: str | None) -> WorkKind | None:
    """The kind whose job function is `function_name`, if any."""
    return next((kind for kind in WORK_KINDS if kind.job_function == function_name), None)


def record_of(job: Job) -> tuple[WorkKind | None, int | None]:
    """The kind and record id a job of this product works on; (None, None) for any other job."""
    kind = kind_of(job.func_name)
    if kind is None or len(job.args) != 1 or not isinstance(job.args[0], int):
        return None, None
    return kind, job.args[0]
