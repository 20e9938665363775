"""A schedule run's delivery to one destination (DESIGN section 7): one function per transition.

    pending → delivering → delivered | failed
    failed → delivering   (a transient failure once its retry time came, or any failure an
                           administrator retried: `retry_now` makes it due)

Each transition is one guarded UPDATE (app/domain/transitions.py) whose WHERE names the status it
starts from, and after an attempt started, the attempt it acts for: `start` allocates the attempt
number inside its UPDATE (under the row's lock) and appends the attempt row, so two workers on one
delivery make one copy, and a stale attempt (its lease lapsed, the row moved on) settles nothing.

Commits: `start`, `renew_lease`, `delivered` and `failed` commit (facts the next process relies
on). `create` and `retry_now` do not: their callers commit them with the run's other rows or the
audit event. The dispatch claim is the work engine's, guarded by `startable`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, or_, select, update

from app.domain import delivery_attempts, transitions
from app.extensions import db, insert_ignoring_duplicates
from app.models.export_destination import ExportDestination
from app.models.package_delivery import FailureClass
from app.models.schedule_destination_delivery import (
    DestinationDelivery,
    DestinationDeliveryAttempt,
    DestinationDeliveryStatus,
)
from app.models.types import Moment, database_time

_move = transitions.of_rows(DestinationDelivery, "Destination delivery", returning=DestinationDelivery.attempt_count)


def startable(now: Moment):
    """Pending, or failed with its retry time come (a transient failure's backoff, or the moment an
    administrator pressed Retry); a permanent failure has no retry time otherwise."""
    return or_(
        DestinationDelivery.status == DestinationDeliveryStatus.PENDING,
        and_(
            DestinationDelivery.status == DestinationDeliveryStatus.FAILED, DestinationDelivery.next_attempt_at <= now
        ),
    )


def to_live_destination():
    """Its destination is enabled and not removed: a destination disabled or removed since the row
    was made receives nothing (the row waits, shown as such on the run's history)."""
    return DestinationDelivery.destination_id.in_(
        select(ExportDestination.id).where(ExportDestination.enabled.is_(True), ExportDestination.removed_at.is_(None))
    )


def create(*, workspace_id: int, run_id: int, destination_id: int, target_key: str) -> None:
    """The run's delivery to the destination, pending, unless the pair has
    one already: the unique (run, destination) index keeps it to one however many attempts or
    presses of Run now try. Not committed."""
    at = database_time(None)
    db.session.execute(
        insert_ignoring_duplicates(DestinationDelivery.__table__, ["run_id", "destination_id"]).values(
            workspace_id=workspace_id,
            run_id=run_id,
            destination_id=destination_id,
            target_key=target_key,
            status=DestinationDeliveryStatus.PENDING,
            attempt_count=0,
            created_at=at,
            updated_at=at,
        )
    )


def start(delivery_id: int, holder: str, lease_expires_at: Moment, now: datetime | None = None) -> int:
    """pending → delivering, or failed and due → delivering, to a live destination: the next
    attempt number, allocated under the row's lock, its attempt row appended and the lease taken.
    Returns the number every later transition of this attempt names. Committed."""
    at = database_time(now)
    number = _move(
        delivery_id,
        [startable(at), to_live_destination()],
        delivery_attempts.attempt_started(
            DestinationDeliveryStatus.DELIVERING, DestinationDelivery.attempt_count, holder, lease_expires_at, at
        ),
        "start (it is not pending, nor failed and due, or its destination is disabled)",
    )
    db.session.add(DestinationDeliveryAttempt(delivery_id=delivery_id, number=number, started_at=at))
    db.session.commit()
    return number


def _held_by(attempt: int) -> list:
    return [
        DestinationDelivery.status == DestinationDeliveryStatus.DELIVERING,
        DestinationDelivery.attempt_count == attempt,
    ]


def renew_lease(delivery_id: int, attempt: int, lease_expires_at: Moment) -> None:
    """The attempt still holds the delivery: its lease runs on. Refused once it does not. Committed."""
    _move(delivery_id, _held_by(attempt), {"lease_expires_at": lease_expires_at}, f"renew attempt {attempt}'s lease")
    db.session.commit()


def _close_attempt(delivery_id: int, attempt: int, at: Moment, **outcome) -> None:
    db.session.execute(
        update(DestinationDeliveryAttempt)
        .where(
            DestinationDeliveryAttempt.delivery_id == delivery_id,
            DestinationDeliveryAttempt.number == attempt,
            DestinationDeliveryAttempt.ended_at.is_(None),
        )
        .values(ended_at=at, **outcome)
    )


def delivered(delivery_id: int, attempt: int, location: str, now: datetime | None = None) -> None:
    """delivering → delivered for the attempt that holds it, with where the file landed. Committed."""
    at = database_time(now)
    cleared = {"failure_class": None, "failure_code": None, "failure_summary": None, "lease_expires_at": None}
    _move(
        delivery_id,
        _held_by(attempt),
        {
            **cleared,
            "status": DestinationDeliveryStatus.DELIVERED,
            "location": location[:600],
            "delivered_at": at,
            "updated_at": at,
        },
        f"be delivered by attempt {attempt}",
    )
    _close_attempt(delivery_id, attempt, at, outcome="delivered")
    db.session.commit()


def failed(
    delivery_id: int,
    attempt: int,
    failure: tuple[FailureClass | str, str, str],
    *,
    retry_at: datetime | None,
    lease_lapsed_before: datetime | None = None,
    now: datetime | None = None,
) -> None:
    """delivering → failed for the attempt that holds it, with the `failure`'s class, code and
    bounded summary in words. A transient failure names when it is tried again (`retry_at`), freeing the row for a
    new dispatch then; a permanent one has no retry time. `lease_lapsed_before` is the watchdog's
    guard (the holder's lease lapsed by then), so a live attempt is never failed on its behalf.
    Committed."""
    failure_class, code, summary = FailureClass(failure[0]), failure[1], failure[2]
    at = database_time(now)
    values = delivery_attempts.attempt_failed(
        DestinationDeliveryStatus.FAILED, failure_class, code, summary, retry_at, at
    )
    guard = _held_by(attempt)
    if lease_lapsed_before is not None:
        guard.append(DestinationDelivery.lease_expires_at < lease_lapsed_before)
    _move(delivery_id, guard, values, f"fail attempt {attempt}")
    _close_attempt(
        delivery_id,
        attempt,
        at,
        outcome="failed",
        failure_class=failure_class,
        failure_code=values["failure_code"],
        summary=values["failure_summary"],
    )
    db.session.commit()


def retry_now(delivery_id: int, seen_attempt: int, now: datetime | None = None) -> None:
    """A failed delivery, as the administrator saw it (at `seen_attempt`), becomes due now, whatever
    its failure class; `start` then takes it as the next attempt. Refused unless it is still failed
    at that attempt, not due already (a second press of the same page makes no second retry), and
    its destination is live. Not committed: the caller commits it with its audit event."""
    at = database_time(now)
    _move(
        delivery_id,
        [
            DestinationDelivery.status == DestinationDeliveryStatus.FAILED,
            DestinationDelivery.attempt_count == seen_attempt,
            or_(DestinationDelivery.next_attempt_at.is_(None), DestinationDelivery.next_attempt_at > at),
            to_live_destination(),
        ],
        {"next_attempt_at": at, "job_id": None, "dispatched_at": None, "updated_at": at},
        f"be retried (it is not failed at attempt {seen_attempt} and waiting, or its destination is disabled)",
    )
