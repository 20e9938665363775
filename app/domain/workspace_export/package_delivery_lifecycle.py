"""The workspace-export delivery lifecycle (STATE-PFM-QRY-011, seed 000): one function per transition.

    pending → delivering → delivered | failed
    failed → delivering (a transient failure once its retry time has come, or any failure an
                         administrator retried: `retry_now` makes it due)
    pending → withheld → pending (`release`: its destination enabled again, Deliver)
    pending | failed | withheld → expired;  failed → superseded

Each transition is one conditional UPDATE whose WHERE clause names the statuses it starts from
(INV-12), so two workers, the retry dispatcher and the sweep can race without reopening a
settled row: a delivered or superseded row never starts again. `start` allocates the attempt
number inside that UPDATE (the row's lock holds it) and appends the attempt row; the outcome of
an attempt names its number, so a stale attempt (its lease lapsed and the row moved on) changes
nothing. A refused transition rolls the session back and raises TransitionRefused
(app/domain/transitions.py, the guarded update every lifecycle shares).

A permanent failure is not retried by itself: `start` accepts a failed row only when it is due,
and only a transient failure gets a retry time from the backoff. An administrator's Retry
(`retry_now`) makes any failed row due; staff may instead supersede it and make a new row
(`replaces_id`).

Commits: `start`, `renew_lease`, `delivered` and `failed` commit (each is a fact the next
process relies on). `create`, `withhold`, `retry_now`, `release`, `expire`, `expire_unfinished`,
`supersede` and `create_replacement` do not: their callers commit them with related rows or an
audit event. The claim of a dispatch is the work engine's (app/services/work/claims.py), guarded
by `startable`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, or_, select, update

from app.domain import delivery_attempts, transitions
from app.domain.errors import TransitionRefused
from app.extensions import db, insert_ignoring_duplicates
from app.models.export_destination import ExportDestination
from app.models.export_package import ExportPackage, PackageStatus
from app.models.package_delivery import (
    FAILURE_CODE_LIMIT,
    DeliveryStatus,
    ExportDelivery,
    ExportDeliveryAttempt,
    FailureClass,
)
from app.models.types import SUMMARY_LIMIT, Moment, database_time, lease_live

UNFINISHED = (DeliveryStatus.PENDING, DeliveryStatus.FAILED, DeliveryStatus.WITHHELD)


def _apply(delivery_id: int, guard: list, values: dict, action: str, expected: str) -> int:
    """The guarded UPDATE of one delivery (app/domain/transitions.py); returns its attempt number."""
    return transitions.apply(
        ExportDelivery,
        [ExportDelivery.id == delivery_id, *guard],
        values,
        _refusal(delivery_id, action, expected),
        ExportDelivery.attempt_count,
    )


def _refusal(delivery_id: int, action: str, expected: str) -> str:
    return f"delivery {delivery_id} cannot {action}: it is not {expected}"


def copying(now: Moment | None = None):
    """Delivering under a live lease: a worker is copying the package now, so its bytes must stay
    (app/domain/workspace_export/export_package.py refuses to settle the package meanwhile)."""
    return and_(ExportDelivery.status == DeliveryStatus.DELIVERING, lease_live(ExportDelivery.lease_expires_at, now))


def startable(now: Moment):
    """Pending, or failed with its retry time come: a transient failure's backoff, or the moment
    an administrator pressed Retry (`retry_now`); a permanent failure has no retry time otherwise."""
    return or_(
        ExportDelivery.status == DeliveryStatus.PENDING,
        and_(
            ExportDelivery.status == DeliveryStatus.FAILED,
            or_(
                ExportDelivery.next_attempt_at <= now,
                and_(ExportDelivery.failure_class == FailureClass.TRANSIENT, ExportDelivery.next_attempt_at.is_(None)),
            ),
        ),
    )


def _package_inside_retention(now: Moment):
    """The delivery's package is available, its retention deadline ahead."""
    return ExportDelivery.package_id.in_(
        select(ExportPackage.id).where(ExportPackage.status == PackageStatus.AVAILABLE, ExportPackage.expires_at > now)
    )


def deliverable_now(now: Moment) -> list:
    """An attempt may be asked for (by a person, or dispatched by the work engine) only while the
    package is available inside its retention and the destination is enabled (and not removed)."""
    return [
        _package_inside_retention(now),
        ExportDelivery.destination_id.in_(
            select(ExportDestination.id).where(
                ExportDestination.enabled.is_(True), ExportDestination.removed_at.is_(None)
            )
        ),
    ]


def create(
    *,
    workspace_id: int,
    package_id: int,
    destination_id: int,
    replaces_id: int | None = None,
    now: datetime | None = None,
) -> int | None:
    """Insert a pending delivery of the package to the destination; returns its id, or None when
    the pair already has a live (not superseded) delivery, which the partial unique index keeps
    to one however many processes try at once. Not committed."""
    at = database_time(now)
    # No conflict target: the live-delivery index is partial.
    return db.session.execute(
        insert_ignoring_duplicates(ExportDelivery.__table__)
        .values(
            workspace_id=workspace_id,
            package_id=package_id,
            destination_id=destination_id,
            replaces_id=replaces_id,
            status=DeliveryStatus.PENDING,
            attempt_count=0,
            created_at=at,
            updated_at=at,
        )
        .returning(ExportDelivery.__table__.c.id)
    ).scalar_one_or_none()


def start(delivery_id: int, holder: str, lease_expires_at: Moment, now: datetime | None = None) -> int:
    """pending → delivering, or failed (transient, due) → delivering: allocate the next attempt
    number under the row's lock, append the attempt and take the lease. Returns the number every
    later transition of this attempt names. Committed.

    The package's row is share-locked first and must be available inside its retention, as for
    Retry and Deliver: a settlement (deletion, expiry) either waits for this start to commit and
    then sees the copy, or commits first and this start is refused, so no copy begins under a
    package whose bytes are being removed; nor of a package past its deadline that the sweep has
    not expired yet."""
    at = database_time(now)
    # None when the package's deadline has passed.
    package_status = db.session.scalar(
        select(ExportPackage.status)
        .where(
            ExportPackage.id
            == select(ExportDelivery.package_id).where(ExportDelivery.id == delivery_id).scalar_subquery(),
            ExportPackage.expires_at > at,
        )
        .with_for_update(read=True)
    )
    if package_status != PackageStatus.AVAILABLE:
        db.session.rollback()
        raise TransitionRefused(
            _refusal(delivery_id, "start", "a delivery of an available package inside its retention")
        )
    number = _apply(
        delivery_id,
        [startable(at)],
        delivery_attempts.attempt_started(
            DeliveryStatus.DELIVERING, ExportDelivery.attempt_count, holder, lease_expires_at, at
        ),
        "start",
        "pending, nor failed transiently and due for a retry",
    )
    db.session.add(ExportDeliveryAttempt(delivery_id=delivery_id, number=number, started_at=at))
    db.session.commit()
    return number


def _current(attempt: int) -> list:
    return [ExportDelivery.status == DeliveryStatus.DELIVERING, ExportDelivery.attempt_count == attempt]


def renew_lease(delivery_id: int, attempt: int, lease_expires_at: Moment) -> None:
    _apply(
        delivery_id,
        _current(attempt),
        {"lease_expires_at": lease_expires_at},
        "renew its lease",
        f"delivering at attempt {attempt}",
    )
    db.session.commit()


def _end_attempt(delivery_id: int, attempt: int, now: Moment, **values) -> None:
    db.session.execute(
        update(ExportDeliveryAttempt)
        .where(
            ExportDeliveryAttempt.delivery_id == delivery_id,
            ExportDeliveryAttempt.number == attempt,
            ExportDeliveryAttempt.ended_at.is_(None),
        )
        .values(ended_at=now, **values)
    )


def delivered(delivery_id: int, attempt: int, location: str, now: datetime | None = None) -> None:
    """delivering → delivered for the current attempt, with where the package landed. Committed."""
    at = database_time(now)
    _apply(
        delivery_id,
        _current(attempt),
        {
            "status": DeliveryStatus.DELIVERED,
            "location": location[:600],
            "delivered_at": at,
            "failure_class": None,
            "failure_code": None,
            "failure_summary": None,
            "next_attempt_at": None,
            "lease_expires_at": None,
            "updated_at": at,
        },
        "be delivered",
        f"delivering at attempt {attempt}",
    )
    _end_attempt(delivery_id, attempt, at, outcome="delivered")
    db.session.commit()


def failed(
    delivery_id: int,
    attempt: int,
    failure_class: FailureClass | str,
    code: str,
    summary: str,
    next_attempt_at: datetime | None = None,
    now: datetime | None = None,
    lease_lapsed_before: datetime | None = None,
) -> None:
    """delivering → failed for the current attempt, with the class, code and bounded summary.

    A transient failure names when to retry (`next_attempt_at`) and frees the row for a new
    dispatch; a permanent one must not. `lease_lapsed_before` adds the guard the watchdog needs
    (the holder's lease lapsed by then), so a live attempt is never failed on its behalf.
    Committed.
    """
    at = database_time(now)
    failure_class = FailureClass(failure_class)
    values = delivery_attempts.attempt_failed(DeliveryStatus.FAILED, failure_class, code, summary, next_attempt_at, at)
    guard = _current(attempt)
    if lease_lapsed_before is not None:
        guard.append(
            or_(ExportDelivery.lease_expires_at.is_(None), ExportDelivery.lease_expires_at < lease_lapsed_before)
        )
    _apply(delivery_id, guard, values, "fail", f"delivering at attempt {attempt}")
    _end_attempt(
        delivery_id,
        attempt,
        at,
        outcome="failed",
        failure_class=failure_class,
        failure_code=code[:FAILURE_CODE_LIMIT],
        summary=summary[:SUMMARY_LIMIT],
    )
    db.session.commit()


def withhold(delivery_id: int, now: datetime | None = None) -> None:
    """pending → withheld (its destination is disabled). Not committed."""
    _apply(
        delivery_id,
        [ExportDelivery.status == DeliveryStatus.PENDING],
        {"status": DeliveryStatus.WITHHELD, "updated_at": database_time(now)},
        "be withheld",
        "pending",
    )


def retry_now(delivery_id: int, seen_attempt: int, now: datetime | None = None) -> None:
    """A failed delivery, as the administrator saw it (at `seen_attempt`), becomes due for a retry
    now, whatever its failure class: the next dispatch claims it and `start` moves it
    failed → delivering as the next attempt. Refused unless it is still failed at that attempt,
    its package available inside its retention and its destination enabled. Not committed: the
    caller records the audit event in the same transaction. Refused too when it is already due
    (a retry asked for, or a backoff whose time came), so a second press makes no second retry."""
    at = database_time(now)
    guard = [
        ExportDelivery.status == DeliveryStatus.FAILED,
        ExportDelivery.attempt_count == seen_attempt,
        # Not due already (a second press, or a backoff whose time came): one retry per intent.
        or_(ExportDelivery.next_attempt_at.is_(None), ExportDelivery.next_attempt_at > at),
        *deliverable_now(at),
    ]
    _apply(
        delivery_id,
        guard,
        {"next_attempt_at": at, "job_id": None, "dispatched_at": None, "updated_at": at},
        "be retried",
        f"failed at attempt {seen_attempt} and deliverable",
    )


def release(delivery_id: int, now: datetime | None = None) -> None:
    """withheld → pending, once its destination is enabled again, for an administrator's Deliver;
    the next dispatch then starts it. Refused unless it is withheld, its package available inside
    its retention and its destination enabled. Not committed: the caller records the audit event
    in the same transaction."""
    at = database_time(now)
    guard = [ExportDelivery.status == DeliveryStatus.WITHHELD, *deliverable_now(at)]
    values = {"status": DeliveryStatus.PENDING, "job_id": None, "dispatched_at": None, "updated_at": at}
    _apply(delivery_id, guard, values, "be delivered", "withheld and deliverable")


def expire(delivery_id: int, now: datetime | None = None) -> None:
    """pending | failed | withheld → expired (its package is no longer available). Not committed."""
    _apply(
        delivery_id,
        [ExportDelivery.status.in_(UNFINISHED)],
        {"status": DeliveryStatus.EXPIRED, "next_attempt_at": None, "updated_at": database_time(now)},
        "expire",
        "pending, failed or withheld",
    )


def expire_unfinished(package_id: int, now: datetime | None = None) -> int:
    """`expire` for every pending, failed or withheld delivery of the package (the sweep, after
    the package expired or was deleted); returns how many. Not committed."""
    expired = db.session.execute(
        update(ExportDelivery)
        .where(ExportDelivery.package_id == package_id, ExportDelivery.status.in_(UNFINISHED))
        .values(status=DeliveryStatus.EXPIRED, next_attempt_at=None, updated_at=database_time(now))
        .returning(ExportDelivery.id)
        .execution_options(synchronize_session=False)
    ).all()
    return len(expired)


def supersede(delivery_id: int, person_id: int, now: datetime | None = None) -> None:
    """failed → superseded by a person (staff with execute permission), while its package is
    available inside its retention (its replacement could not be delivered otherwise). Not
    committed: the caller records the audit event and the replacement in the same transaction."""
    at = database_time(now)
    _apply(
        delivery_id,
        [ExportDelivery.status == DeliveryStatus.FAILED, _package_inside_retention(at)],
        {
            "status": DeliveryStatus.SUPERSEDED,
            "superseded_by_id": person_id,
            "next_attempt_at": None,
            "updated_at": at,
        },
        "be superseded",
        "failed, of a package inside its retention",
    )


def create_replacement(delivery_id: int, now: datetime | None = None) -> int:
    """A new pending row for a superseded delivery's package and destination (`replaces_id`);
    returns its id. Refused unless the row is superseded and has no replacement yet. Not committed."""
    old = db.session.execute(
        select(ExportDelivery)
        .where(ExportDelivery.id == delivery_id)
        .with_for_update()
        .execution_options(populate_existing=True)  # `supersede` changed it behind the session's back
    ).scalar_one_or_none()
    # Refused as every transition is (app/domain/transitions.py): the session rolled back first.
    if old is None or old.status != DeliveryStatus.SUPERSEDED:
        db.session.rollback()
        raise TransitionRefused(_refusal(delivery_id, "be replaced", "superseded"))
    replaced = db.session.execute(select(ExportDelivery.id).where(ExportDelivery.replaces_id == delivery_id)).first()
    if replaced is not None:
        db.session.rollback()
        raise TransitionRefused(f"delivery {delivery_id} already has a replacement (delivery {replaced.id})")
    replacement_id = create(
        workspace_id=old.workspace_id,
        package_id=old.package_id,
        destination_id=old.destination_id,
        replaces_id=delivery_id,
        now=now,
    )
    if replacement_id is None:
        db.session.rollback()
        raise TransitionRefused(f"delivery {delivery_id}: its package already has a live delivery to that destination")
    return replacement_id
