"""What people do to a package delivery: an administrator's Retry of a failed delivery and Deliver
of a withheld one, and staff's view of a delivery and their supersede-and-replace. Each is a
guarded transition (app/domain/workspace_export/package_delivery_lifecycle.py), audited in its
transaction, then dispatched by the work engine's claim (app/services/work/claims.py) as the
delivery's kind declares it (app/services/workspace_export/delivery_work.py)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.domain.people import staff_rules
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models import Person, Workspace
from app.models.export_destination import ExportDestination
from app.models.export_package import ExportPackage, PackageStatus
from app.models.package_delivery import DeliveryStatus, ExportDelivery, ExportDeliveryAttempt
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.work import claims
from app.services.workspace_export.delivery_work import DELIVERIES

log = logging.getLogger(__name__)

PAST_RETENTION = (
    "The package is past its retention (expired or deleted), so it can no longer be delivered. Export again."
)


# An administrator's Retry and Deliver


def retry(workspace_id: int, delivery_id: int, seen_attempt: int, person: Person) -> None:
    """Retry a failed delivery now, for an administrator of its workspace, at the attempt they saw
    (a second press finds it no longer failed at that attempt): audited in the transaction that
    makes it due, then dispatched (claim, then enqueue). The attempt it makes is appended to the
    ones before. TransitionRefused with a sentence otherwise."""
    delivery = _workspace_delivery(workspace_id, delivery_id)
    try:
        package_delivery_lifecycle.retry_now(delivery.id, seen_attempt)
    except TransitionRefused:
        raise TransitionRefused(_why_not(delivery, DeliveryStatus.FAILED, seen_attempt)) from None
    _audit_request(delivery, person, "export_delivery.retried", seen_attempt)


def deliver_withheld(workspace_id: int, delivery_id: int, person: Person) -> None:
    """Deliver a withheld delivery now that its destination is enabled, for an administrator of
    its workspace: withheld → pending, audited in the same transaction, then dispatched.
    TransitionRefused with a sentence otherwise."""
    delivery = _workspace_delivery(workspace_id, delivery_id)
    try:
        package_delivery_lifecycle.release(delivery.id)
    except TransitionRefused:
        raise TransitionRefused(_why_not(delivery, DeliveryStatus.WITHHELD, delivery.attempt_count)) from None
    _audit_request(delivery, person, "export_delivery.released", delivery.attempt_count)


def _workspace_delivery(workspace_id: int, delivery_id: int) -> ExportDelivery:
    delivery = db.session.scalar(
        select(ExportDelivery).where(ExportDelivery.id == delivery_id, ExportDelivery.workspace_id == workspace_id)
    )
    if delivery is None:
        raise TransitionRefused("This delivery does not exist in this workspace.")
    return delivery


def _audit_request(delivery: ExportDelivery, person: Person, action: str, attempt: int) -> None:
    audit.record(
        workspace_id=delivery.workspace_id,
        actor_id=person.id,
        action=action,
        subject_type="export_delivery",
        subject_id=delivery.id,
        details={
            "package_id": delivery.package_id,
            "destination_id": delivery.destination_id,
            "attempts_before": attempt,
        },
    )
    db.session.commit()
    log.info("package delivery %s: %s by person %s", delivery.id, action, person.id)
    claims.dispatch(DELIVERIES, delivery.id, None)


def _why_not(delivery: ExportDelivery, expected: DeliveryStatus, seen_attempt: int) -> str:
    """The sentence for a refused Retry or Deliver, read after the refusal."""
    db.session.rollback()
    delivery = db.session.get_one(ExportDelivery, delivery.id, populate_existing=True)
    package = db.session.get_one(ExportPackage, delivery.package_id, populate_existing=True)
    destination = db.session.get_one(ExportDestination, delivery.destination_id, populate_existing=True)
    db.session.rollback()
    if delivery.status != expected or delivery.attempt_count != seen_attempt:
        return f"This delivery is {delivery.status} now (attempt {delivery.attempt_count}); the page shows where it is."
    if (
        expected == DeliveryStatus.FAILED
        and delivery.next_attempt_at is not None
        and delivery.next_attempt_at <= utcnow()
    ):
        return "This delivery is already being retried; its next attempt shows here in a moment."
    if _past_retention(package):
        return PAST_RETENTION
    if destination.removed_at is not None:
        return f"The destination {destination.name} was removed, so this delivery can no longer be made."
    return f"The destination {destination.name} is disabled. Enable it in the export settings, then try again."


def _past_retention(package: ExportPackage) -> bool:
    return package.status != PackageStatus.AVAILABLE or package.expires_at <= utcnow()


# Staff page and action


@dataclass(frozen=True)
class StaffDeliveryView:
    delivery: ExportDelivery
    attempts: list[ExportDeliveryAttempt]
    workspace: Workspace
    destination: ExportDestination
    package: ExportPackage
    replaced_by_id: int | None


def staff_view(delivery_id: int) -> StaffDeliveryView | None:
    """A delivery as staff see it: with its attempts, workspace, destination, package and
    replacement. Staff only: the caller has checked that."""
    delivery = db.session.get(ExportDelivery, delivery_id, populate_existing=True)
    if delivery is None:
        return None
    attempts = list(
        db.session.scalars(
            select(ExportDeliveryAttempt)
            .where(ExportDeliveryAttempt.delivery_id == delivery_id)
            .order_by(ExportDeliveryAttempt.number)
            .execution_options(populate_existing=True)
        )
    )
    replaced_by = db.session.scalar(select(ExportDelivery.id).where(ExportDelivery.replaces_id == delivery_id))
    return StaffDeliveryView(
        delivery=delivery,
        attempts=attempts,
        workspace=db.session.get_one(Workspace, delivery.workspace_id),
        destination=db.session.get_one(ExportDestination, delivery.destination_id),
        package=db.session.get_one(ExportPackage, delivery.package_id),
        replaced_by_id=replaced_by,
    )


def can_supersede(person: Person) -> bool:
    return staff_rules.may_act(person)


def supersede_and_replace(delivery_id: int, actor: Person, reason: str) -> int:
    """Supersede a failed delivery and start its replacement (a new row), for staff with
    `staff.execute`; the audit event with the reason is written in the same transaction.
    Returns the replacement's id. Raises AccessDenied, ValidationError (the reason, as for every
    staff action) or TransitionRefused (the delivery is not failed, or its package is past its
    retention), each with a sentence for the page."""
    staff_rules.refuse_unless_staff_executor(actor)
    reason = staff_rules.staff_reason(reason)
    delivery = db.session.get(ExportDelivery, delivery_id)
    if delivery is None:
        raise TransitionRefused("This delivery does not exist.")
    try:
        package_delivery_lifecycle.supersede(delivery_id, actor.id)
        replacement_id = package_delivery_lifecycle.create_replacement(delivery_id)
    except TransitionRefused:
        raise TransitionRefused(_why_not_superseded(delivery_id)) from None
    audit.record(
        workspace_id=delivery.workspace_id,
        actor_id=actor.id,
        action="export_delivery.superseded",
        subject_type="export_delivery",
        subject_id=delivery_id,
        reason=reason,
        details={
            "replacement_id": replacement_id,
            "package_id": delivery.package_id,
            "destination_id": delivery.destination_id,
        },
    )
    db.session.commit()
    claims.dispatch(DELIVERIES, replacement_id, None)
    return replacement_id


def _why_not_superseded(delivery_id: int) -> str:
    """The sentence for a refused supersede, read after the refusal."""
    db.session.rollback()
    delivery = db.session.get_one(ExportDelivery, delivery_id, populate_existing=True)
    package = db.session.get_one(ExportPackage, delivery.package_id, populate_existing=True)
    db.session.rollback()
    if delivery.status != DeliveryStatus.FAILED:
        return "Only a failed delivery can be superseded; this one is not failed now."
    if _past_retention(package):
        return PAST_RETENTION
    return "Another delivery of this package to that destination exists already, so no replacement was made."
