"""Moving package deliveries onto RQ, again when RQ lost them, and settling an attempt whose
worker died (the kind's spec is `app.services.work.kinds.DELIVERIES`): claim, then enqueue, as
every kind does. What a delivery's job does is app/services/workspace_export/package_delivery.py."""

from __future__ import annotations

import functools
import logging
from datetime import datetime

from sqlalchemy import or_, select

from app.destinations import DeliveryFailure, open_destination
from app.domain.errors import TransitionRefused
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models.export_destination import ExportDestination
from app.models.export_package import ExportPackage, PackageStatus
from app.models.package_delivery import DeliveryStatus, ExportDelivery, FailureClass
from app.models.types import utcnow
from app.services.work import leases
from app.services.work.queue import ClaimedJob, WorkPriority, claim_and_enqueue
from app.services.work.work_kind import (
    LOST_AFTER,
    Candidate,
    Requeue,
    RequeueRefused,
    job_id,
    lapsed_candidate,
    refuse_while_held,
)
from app.services.workspace_export import package_delivery

log = logging.getLogger(__name__)

DELIVERY_JOB = "jobs.package_delivery.run"
DELIVERY_JOB_SLUG = "package-delivery"


def dispatch(delivery_id: int, seen_job_id: str | None) -> bool:
    """Claim the delivery's next attempt for a new job from the job id the caller saw, commit,
    then enqueue it: two schedulers never enqueue the same attempt twice."""
    job = ClaimedJob(
        DELIVERY_JOB,
        delivery_id,
        job_id(DELIVERY_JOB_SLUG, delivery_id),
        f"package delivery {delivery_id}",
        WorkPriority.BULK,
    )
    return claim_and_enqueue(
        lambda: package_delivery_lifecycle.claim_dispatch(delivery_id, seen_job_id, job.job_id), job
    )


def _deliverable(now: datetime):
    """Rows whose next attempt may start now, to an enabled destination, of an available package
    inside its retention (`start` refuses the others).
    A fresh pending row is left to `deliver_package`, which made it and runs it; one still pending
    after LOST_AFTER was left behind (its process died) and is dispatched."""
    return (
        select(ExportDelivery.id, ExportDelivery.job_id)
        .join(ExportDestination, ExportDestination.id == ExportDelivery.destination_id)
        .join(ExportPackage, ExportPackage.id == ExportDelivery.package_id)
        .where(
            package_delivery_lifecycle.startable(now),
            or_(ExportDelivery.status != DeliveryStatus.PENDING, ExportDelivery.created_at < now - LOST_AFTER),
            ExportDestination.enabled.is_(True),
            ExportDestination.removed_at.is_(None),
            ExportPackage.status == PackageStatus.AVAILABLE,
            ExportPackage.expires_at > now,
        )
    )


def dispatch_due(now: datetime | None = None, limit: int = 200) -> int:
    """Enqueue deliveries whose retry time has come (and pending ones left behind)."""
    now = now or utcnow()
    due = db.session.scalars(
        _deliverable(now).where(ExportDelivery.job_id.is_(None)).order_by(ExportDelivery.id).limit(limit)
    ).all()
    db.session.rollback()
    return sum(dispatch(delivery_id, None) for delivery_id in due)


def lost(now: datetime) -> list[Candidate]:
    """Deliveries waiting for an attempt dispatched longer than LOST_AFTER before `now`, for the
    engine's lost-job turn."""
    rows = db.session.execute(
        _deliverable(now)
        .where(ExportDelivery.job_id.is_not(None), ExportDelivery.dispatched_at < now - LOST_AFTER)
        .order_by(ExportDelivery.id)
        .limit(200)
    ).all()
    db.session.rollback()
    return [Candidate(row.id, row.job_id, functools.partial(dispatch, row.id, row.job_id)) for row in rows]


def lapsed(now: datetime) -> list[Candidate]:
    """Delivering attempts whose holder's lease lapsed by `now` (their worker died)."""
    rows = db.session.execute(
        select(ExportDelivery.id, ExportDelivery.job_id, ExportDelivery.attempt_count, ExportDelivery.lease_holder)
        .where(
            ExportDelivery.status == DeliveryStatus.DELIVERING,
            leases.lease_lapsed(ExportDelivery.lease_expires_at, now),
        )
        .order_by(ExportDelivery.id)
    ).all()
    db.session.rollback()
    return [lapsed_candidate(row, functools.partial(dispatch, row.id, row.job_id)) for row in rows]


def retry_lapsed_later(candidate: Candidate, now: datetime, retry_at: datetime) -> bool:
    """Fail the lapsed attempt as transient `worker_stopped`, its retry due at `retry_at`."""
    return _fail_lapsed(candidate, now, retry_at)


def give_up_lapsed(candidate: Candidate, now: datetime) -> bool:
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


def requeue(delivery_id: int, now: datetime) -> Requeue:
    """A staff requeue of the delivery: refused once it settled, while an attempt's holder is
    alive, while it is withheld or failed for good (an administrator's Deliver, staff's
    supersede, are their paths); a transient failure waiting for its backoff is made due now."""
    delivery = db.session.get(ExportDelivery, delivery_id)
    if delivery is None:
        raise RequeueRefused(f"Package delivery {delivery_id} no longer exists.")
    label = f"Package delivery {delivery_id}"
    if delivery.status in (DeliveryStatus.DELIVERED, DeliveryStatus.SUPERSEDED, DeliveryStatus.EXPIRED):
        raise RequeueRefused.finished(label, delivery.status)
    if delivery.status == DeliveryStatus.WITHHELD:
        raise RequeueRefused(
            f"{label} is withheld because its destination is disabled; once the destination is enabled, "
            "an administrator of the workspace delivers it from its page."
        )
    if delivery.status == DeliveryStatus.DELIVERING:
        refuse_while_held(label, "copying", delivery.lease_expires_at, now)
        raise RequeueRefused(
            f"{label}'s worker stopped mid-copy; the watchdog records that attempt as failed within seconds "
            "and retries it. Requeue it again once it shows as failed if the retry should not wait."
        )
    if delivery.status == DeliveryStatus.FAILED and delivery.failure_class == FailureClass.PERMANENT:
        raise RequeueRefused(f"{label} failed for good; supersede it from its page to start a replacement delivery.")
    seen_job_id, seen_attempt = delivery.job_id, delivery.attempt_count
    waits_for_backoff = delivery.status == DeliveryStatus.FAILED and (
        delivery.next_attempt_at is not None and delivery.next_attempt_at > now
    )

    def dispatch_now() -> bool:
        if not waits_for_backoff:
            return dispatch(delivery_id, seen_job_id)
        try:
            package_delivery_lifecycle.retry_now(delivery_id, seen_attempt, now)
        except TransitionRefused:
            return False
        return dispatch(delivery_id, None)

    return Requeue(delivery.workspace_id, "export_delivery", label, dispatch_now)
