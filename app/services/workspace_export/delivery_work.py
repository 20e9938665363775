"""Package deliveries as a kind of the work engine: where their records and claims are, and what
the engine cannot know of them: when a delivery waits for an attempt, how an attempt whose worker
died is failed (retried after the backoff, or for good), and what a staff requeue refuses or does
first. `app.services.work.kinds` registers it; what a delivery's job does is
app/services/workspace_export/package_delivery.py."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_

from app.destinations import DeliveryFailure, open_destination
from app.domain.timing.retry_policy import COPY_TO_A_DESTINATION
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models.export_destination import ExportDestination
from app.models.export_package import ExportPackage
from app.models.package_delivery import DeliveryStatus, ExportDelivery, FailureClass
from app.services.work.queue import WorkPriority
from app.services.work.work_kind import LOST_AFTER, Candidate, RequeueRefused, WorkKind
from app.services.work.work_rows import WorkRows
from app.services.workspace_export import package_delivery

log = logging.getLogger(__name__)


def _waiting(now: datetime) -> ColumnElement[bool]:
    """Its next attempt may start now, to an enabled destination, of an available package inside
    its retention (`start` refuses the others). A fresh pending row is left to `deliver_package`,
    which made it and runs it; one still pending after LOST_AFTER was left behind (its process
    died) and is dispatched."""
    return and_(
        package_delivery_lifecycle.startable(now),
        or_(ExportDelivery.status != DeliveryStatus.PENDING, ExportDelivery.created_at < now - LOST_AFTER),
        *package_delivery_lifecycle.deliverable_now(now),
    )


def _retry_later(candidate: Candidate, now: datetime, retry_at: datetime) -> bool:
    """Fail the lapsed attempt as transient `worker_stopped`, its retry due at `retry_at`."""
    return _fail_lapsed(candidate, now, retry_at)


def _give_up(candidate: Candidate, now: datetime) -> bool:
    """Fail the lapsed attempt, the last the policy allows, for good (`retries_exhausted`), and
    tell the administrators."""
    return _fail_lapsed(candidate, now, None)


def _fail_lapsed(candidate: Candidate, now: datetime, retry_at: datetime | None) -> bool:
    delivery = db.session.get(ExportDelivery, candidate.record_id)
    if delivery is None:
        return False
    summary = f"The worker running this attempt ({candidate.holder or 'unknown'}) stopped before it finished."
    failure = DeliveryFailure(FailureClass.TRANSIENT, package_delivery.WORKER_STOPPED, summary)
    outcome = package_delivery.record_failure(
        delivery, candidate.attempt, failure, now, lease_lapsed_before=now, retry_at=retry_at
    )
    if outcome == "stale":
        return False
    _remove_dead_attempts_copy(candidate.record_id, candidate.attempt)
    return True


def _remove_dead_attempts_copy(delivery_id: int, attempt: int) -> None:
    """A worker killed mid-copy leaves volumes without their manifest at the destination; they
    are removed as its attempt is failed, so the customer never finds part of a package while
    the retry waits (or after the last attempt). Nothing is removed once a newer attempt started:
    the same names are its objects then."""
    delivery = db.session.get_one(ExportDelivery, delivery_id, populate_existing=True)
    if delivery.attempt_count != attempt or delivery.status != DeliveryStatus.FAILED:
        db.session.rollback()
        return
    package = db.session.get_one(ExportPackage, delivery.package_id)
    destination = db.session.get_one(ExportDestination, delivery.destination_id)
    targets = [package_delivery.relative_key(package, key) for key in package_delivery.package_keys(package)]
    try:
        store = open_destination(destination)
    except Exception:  # an unusable destination holds nothing this attempt could have written
        log.warning("package delivery %s: its destination cannot be opened to remove a dead copy", delivery_id)
        db.session.rollback()
        return
    db.session.rollback()  # no transaction stays open while the destination answers
    try:
        package_delivery.remove_objects(store, targets)
    finally:
        store.close()


def _before_requeue(delivery: ExportDelivery, now: datetime) -> Callable[[], None] | None:
    """A staff requeue is refused while it is withheld, while a dead attempt waits to be failed, or
    once it failed for good (an administrator's Deliver, the engine, staff's supersede, are their
    paths); a transient failure waiting for its backoff is made due now first."""
    label = f"Package delivery {delivery.id}"
    if delivery.status == DeliveryStatus.WITHHELD:
        raise RequeueRefused(
            f"{label} is withheld because its destination is disabled; once the destination is enabled, "
            "an administrator of the workspace delivers it from its page."
        )
    if delivery.status == DeliveryStatus.DELIVERING:
        raise RequeueRefused(
            f"{label}'s worker stopped mid-copy; the watchdog records that attempt as failed within seconds "
            "and retries it. Requeue it again once it shows as failed if the retry should not wait."
        )
    if delivery.status == DeliveryStatus.FAILED and delivery.failure_class == FailureClass.PERMANENT:
        raise RequeueRefused(f"{label} failed for good; supersede it from its page to start a replacement delivery.")
    if (
        delivery.status == DeliveryStatus.FAILED
        and delivery.next_attempt_at is not None
        and delivery.next_attempt_at > now
    ):
        delivery_id, seen_attempt = delivery.id, delivery.attempt_count
        return lambda: package_delivery_lifecycle.retry_now(delivery_id, seen_attempt, now)
    return None


DELIVERIES = WorkKind(
    name="delivery",
    slug="package-delivery",
    priority=WorkPriority.BULK,
    job_function="jobs.package_delivery.run",
    # A copy whose worker died is a transient failure like any other: retried after the backoff.
    retries=COPY_TO_A_DESTINATION,
    retry_later=_retry_later,
    rows=WorkRows.leased(
        ExportDelivery,
        active=(*package_delivery_lifecycle.UNFINISHED, DeliveryStatus.DELIVERING),
        running=DeliveryStatus.DELIVERING,
        waiting=_waiting,
        # Only an attempt that may start is claimed: pending, or failed with its retry time come.
        claimable=package_delivery_lifecycle.startable,
    ),
    label="Package delivery",
    subject_type="export_delivery",
    held_doing="copying",
    give_up=_give_up,
    before_requeue=_before_requeue,
)
