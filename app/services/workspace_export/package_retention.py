"""Retention of workspace-export packages (seed 001): early deletion and the expiry sweep.

A package leaves `available` once, by one guarded transition (app/domain/workspace_export/export_package.py):
`deleted` by an administrator or by Rhythm staff (app/services/staff/staff_actions.py), audited in the
same transaction (INV-11), or `expired` by the sweep after its retention deadline. Removing its
stored objects and expiring its unfinished deliveries come after that commit, as separate steps
that can be repeated: a package settled but with `bytes_removed_at` still empty is finished by
the next sweep, whoever settled it and wherever it stopped. So the sweep is idempotent and safe
on two machines at once: the settlement is guarded, deleting an object twice is harmless, and
the delivery expiry is guarded on its own statuses.

Bytes are never removed under a delivery that is copying (delivering under a live lease): early
deletion is refused with a sentence naming the destination, and the sweep leaves such a package
for a later turn, both before settling it and before removing its bytes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.domain.workspace_export import export_package, package_delivery_lifecycle
from app.extensions import db
from app.models import AuditEvent, Person
from app.models.export_package import ExportPackage, PackageStatus
from app.models.package_delivery import ExportDelivery
from app.models.types import utcnow
from app.services.accounts import audit
from app.storage import get_storage
from app.storage.base import StorageError, check_key_under

log = logging.getLogger(__name__)

_BATCH = 100
DELETED_ACTION = "export.package_deleted"


PAST_DEADLINE = (
    "This package had reached its retention deadline, so it has expired instead of being deleted: its files "
    "are removed and its unfinished deliveries stopped."
)


class PackageNotDeletable(TransitionRefused):
    """The package is no longer available (already deleted or expired, or expired now because its
    deadline had passed), or a delivery is copying it now; the message says which."""


@dataclass(frozen=True)
class Deletion:
    """Who deleted a package before its deadline, as its page and its notice say it: Rhythm staff
    (never a staff member's name), or the administrator by name; and the reason staff gave."""

    by: str
    by_staff: bool
    reason: str | None


def deletion_of(package_id: int) -> Deletion | None:
    """The package's early deletion, from its audit event; None when it was not deleted early."""
    row = db.session.execute(
        select(AuditEvent.reason, Person.name, Person.is_staff)
        .outerjoin(Person, Person.id == AuditEvent.actor_id)
        .where(
            AuditEvent.action == DELETED_ACTION,
            AuditEvent.subject_type == "export_package",
            AuditEvent.subject_id == package_id,
        )
        .limit(1)
    ).first()
    if row is None:
        return None
    reason, name, is_staff = row
    if is_staff:
        return Deletion("Rhythm staff", True, reason)
    return Deletion(name or "a person no longer in Rhythm", False, reason)


def delete_early(
    workspace_id: int, package_id: int, person: Person, now: datetime | None = None, reason: str | None = None
) -> None:
    """available → deleted by an administrator of the workspace or by Rhythm staff (who give a
    `reason`), audited in the same transaction; then its bytes are removed and its unfinished
    deliveries expired. PackageNotDeletable when it is no longer available or while a delivery
    copies it; and once its retention deadline has passed, when it is expired now, as the sweep
    would, instead of being recorded as deleted."""
    now = now or utcnow()
    package = db.session.scalar(
        select(ExportPackage).where(ExportPackage.id == package_id, ExportPackage.workspace_id == workspace_id)
    )
    if package is None:
        raise PackageNotDeletable("This package does not exist in this workspace.")
    try:
        export_package.delete(package_id, person.id, now)
    except export_package.DeliveryInProgress as busy:
        raise PackageNotDeletable(str(busy)) from None
    except TransitionRefused:
        status = db.session.get_one(ExportPackage, package_id, populate_existing=True).status
        if status == PackageStatus.AVAILABLE:  # refused for its deadline
            _expire_past_deadline(package_id, now)
            raise PackageNotDeletable(PAST_DEADLINE) from None
        raise PackageNotDeletable(f"This package cannot be deleted: it is already {status}.") from None
    audit.record(
        workspace_id=workspace_id,
        actor_id=person.id,
        action=DELETED_ACTION,
        subject_type="export_package",
        subject_id=package_id,
        reason=reason,
        details={"execution_id": package.execution_id},
    )
    db.session.commit()
    log.info("workspace export package %s (%s) deleted early by person %s", package_id, package.prefix, person.id)
    _finish_now_or_at_the_sweep(package_id)


def _expire_past_deadline(package_id: int, now: datetime) -> None:
    """available → expired, as the sweep would, for a package whose deadline passed before the
    sweep's turn; PackageNotDeletable while a delivery copies it."""
    try:
        export_package.expire(package_id, now)
    except export_package.DeliveryInProgress as busy:
        raise PackageNotDeletable(str(busy)) from None
    db.session.commit()
    log.info("workspace export package %s expired when asked to be deleted after its deadline", package_id)
    _finish_now_or_at_the_sweep(package_id)


def _finish_now_or_at_the_sweep(package_id: int) -> None:
    try:
        finish_settled_package(package_id)
    except StorageError:
        # The settlement stands; the sweep removes the bytes once the store answers again.
        log.exception(
            "workspace export package %s: settled, but its stored objects could not be removed yet", package_id
        )


def sweep_expired_packages(now: datetime | None = None) -> int:
    """Expire available packages past their deadline, then finish every settled package: its
    bytes removed, its unfinished deliveries expired. Returns how many packages and deliveries
    this call changed."""
    now = now or utcnow()
    return _expire_due(now) + _remove_settled_bytes(now) + _expire_orphaned_deliveries()


def _expire_due(now: datetime) -> int:
    expired = 0
    being_copied: set[int] = set()  # left available until a later turn finds the copy ended
    while True:
        due = db.session.scalars(
            select(ExportPackage.id)
            .where(
                ExportPackage.status == PackageStatus.AVAILABLE,
                ExportPackage.expires_at <= now,
                ExportPackage.id.not_in(being_copied),
            )
            .order_by(ExportPackage.expires_at, ExportPackage.id)
            .limit(_BATCH)
            .with_for_update(skip_locked=True)
        ).all()
        if not due:
            db.session.rollback()
            return expired
        # Asked after the rows are locked: no delivery can start on them now.
        busy = export_package.being_copied(due, now)
        being_copied |= busy
        settling = [package_id for package_id in due if package_id not in busy]
        for package_id in settling:
            # Locked by this transaction, available and not being copied: the guarded transition applies.
            export_package.expire(package_id, now)
        db.session.commit()
        expired += len(settling)
        if busy:
            log.info("sweep left %s due workspace export packages for a later turn: being delivered", len(busy))
        log.info("sweep expired %s workspace export packages", len(settling))


def _remove_settled_bytes(now: datetime) -> int:
    settled = db.session.scalars(
        select(ExportPackage.id)
        .where(ExportPackage.status != PackageStatus.AVAILABLE, ExportPackage.bytes_removed_at.is_(None))
        .order_by(ExportPackage.id)
    ).all()
    # A delivery whose lease lapsed but whose worker came back may still be reading: wait for it.
    busy = export_package.being_copied(settled, now)
    pending = [package_id for package_id in settled if package_id not in busy]
    db.session.rollback()
    finished = 0
    for package_id in pending:
        try:
            _remove_bytes(package_id)
        except StorageError:
            # The store is down or refused: the package stays unfinished and the next sweep retries.
            log.exception("workspace export package %s: its stored objects could not be removed", package_id)
            continue
        finished += 1
    return finished


def finish_settled_package(package_id: int) -> None:
    """Remove the stored objects of a deleted or expired package and expire its unfinished
    deliveries. Repeatable: each step finds only what is left to do."""
    _remove_bytes(package_id)
    _expire_deliveries([package_id])


def _remove_bytes(package_id: int) -> None:
    package = db.session.get(ExportPackage, package_id, populate_existing=True)
    if package is None or package.status == PackageStatus.AVAILABLE:
        db.session.rollback()
        return
    prefix = package.prefix
    db.session.rollback()
    storage = get_storage()
    # INV-14: only keys under the package's own prefix are ever removed.
    for key in storage.list_keys(prefix):
        storage.delete(check_key_under(key, prefix))
    export_package.record_bytes_removed(package_id)


def _expire_orphaned_deliveries() -> int:
    """Deliveries still unfinished although their package is settled (one that was delivering
    when its package settled, and failed afterwards)."""
    package_ids = db.session.scalars(
        select(ExportDelivery.package_id)
        .join(ExportPackage, ExportPackage.id == ExportDelivery.package_id)
        .where(
            ExportPackage.status != PackageStatus.AVAILABLE,
            ExportDelivery.status.in_(package_delivery_lifecycle.UNFINISHED),
        )
        .distinct()
    ).all()
    db.session.rollback()
    return _expire_deliveries(package_ids)


def _expire_deliveries(package_ids) -> int:
    """pending | failed | withheld → expired for each settled package (guarded on those statuses)."""
    expired = 0
    for package_id in package_ids:
        expired += package_delivery_lifecycle.expire_unfinished(package_id)
        db.session.commit()
    return expired
