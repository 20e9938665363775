"""The workspace-export package lifecycle (STATE-PFM-QRY-010): `available → expired | deleted`.

A package row is inserted `available` by the attempt that stored its manifest (`make_available`,
fenced on that attempt). Settlement is one conditional UPDATE from `available` (INV-12); a
settled package never returns. Settlement waits for no copy: it locks the package's row and is
refused (DeliveryInProgress) while a delivery copies the package under a live lease; a delivery's
start share-locks the same row and needs it available, so the two never overlap. Removing the
bytes and expiring unfinished deliveries are separate steps (app/services/workspace_export/package_retention.py).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from sqlalchemy import select, update

from app.domain import transitions
from app.domain.errors import TransitionRefused
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models.export_destination import ExportDestination
from app.models.export_execution import ExecutionStatus, ExportExecution
from app.models.export_package import ExportPackage, PackageStatus
from app.models.package_delivery import ExportDelivery
from app.models.types import Moment, database_time, moment_after


class DeliveryInProgress(TransitionRefused):
    """A delivery is copying the package now; its bytes stay until the copy has ended."""


def make_available(
    *,
    execution_id: int,
    attempt: int,
    uid: str,
    workspace_id: int,
    format: str,
    cutoff_at: datetime,
    prefix: str,
    manifest_key: str,
    manifest_size: int,
    manifest_sha256: str,
    datasets_count: int,
    row_count: int,
    size_bytes: int,
    volumes_count: int,
    retention_days: int,
    now: datetime | None = None,
) -> ExportPackage:
    """Insert the package as `available` with its retention deadline, if `attempt` is still the
    execution's current running attempt (checked under the execution's row lock). Committed."""
    at = database_time(now)
    current = db.session.execute(
        select(ExportExecution.id)
        .where(
            ExportExecution.id == execution_id,
            ExportExecution.status == ExecutionStatus.RUNNING,
            ExportExecution.attempt_count == attempt,
        )
        .with_for_update()
    ).one_or_none()
    if current is None:
        db.session.rollback()
        raise TransitionRefused(f"workspace export {execution_id}: attempt {attempt} is not current; no package")
    package = ExportPackage(
        uid=uid,
        workspace_id=workspace_id,
        execution_id=execution_id,
        status=PackageStatus.AVAILABLE,
        format=format,
        cutoff_at=cutoff_at,
        prefix=prefix,
        manifest_key=manifest_key,
        manifest_size=manifest_size,
        manifest_sha256=manifest_sha256,
        datasets_count=datasets_count,
        row_count=row_count,
        size_bytes=size_bytes,
        volumes_count=volumes_count,
        retention_days=retention_days,
        expires_at=moment_after(at, timedelta(days=retention_days)),
        created_at=at,
    )
    db.session.add(package)
    db.session.commit()
    return package


def being_copied(package_ids: Collection[int], now: datetime) -> set[int]:
    """Those of the packages a delivery copies now (delivering under a live lease)."""
    if not package_ids:
        return set()
    return set(
        db.session.scalars(
            select(ExportDelivery.package_id).where(
                ExportDelivery.package_id.in_(package_ids), package_delivery_lifecycle.copying(now)
            )
        )
    )


def _copying_to(package_id: int, now: Moment) -> list[str]:
    return list(
        db.session.scalars(
            select(ExportDestination.name)
            .join(ExportDelivery, ExportDelivery.destination_id == ExportDestination.id)
            .where(ExportDelivery.package_id == package_id, package_delivery_lifecycle.copying(now))
            .order_by(ExportDestination.name)
        )
    )


def _settle(package_id: int, values: dict, action: str, now: Moment, *guard) -> None:
    # The row lock comes first; the copy check after it, in its own statement, sees every
    # delivery that started before the lock was granted.
    db.session.execute(select(ExportPackage.id).where(ExportPackage.id == package_id).with_for_update())
    copying_to = _copying_to(package_id, now)
    if copying_to:
        db.session.rollback()
        raise DeliveryInProgress(
            f"This package is being copied to {', '.join(copying_to)} right now, so it cannot be {action} yet."
            " Try again once that delivery has finished."
        )
    transitions.apply(
        ExportPackage,
        [ExportPackage.id == package_id, ExportPackage.status == PackageStatus.AVAILABLE, *guard],
        values,
        f"This package cannot be {action}: it is no longer available.",
    )


def expire(package_id: int, now: datetime | None = None) -> None:
    """available → expired (the sweep, after the deadline); DeliveryInProgress while a delivery
    copies it. Not committed."""
    at = database_time(now)
    _settle(package_id, {"status": PackageStatus.EXPIRED, "settled_at": at}, "expired", at)


def delete(package_id: int, person_id: int | None, now: datetime | None = None) -> None:
    """available → deleted early, before its retention deadline (past it, the package is the
    sweep's to expire); DeliveryInProgress while a delivery copies it. Not committed: the caller
    records the audit event in the same transaction (INV-11)."""
    at = database_time(now)
    _settle(
        package_id,
        {"status": PackageStatus.DELETED, "settled_at": at, "deleted_by_id": person_id},
        "deleted",
        at,
        ExportPackage.expires_at > at,
    )


def record_bytes_removed(package_id: int, now: datetime | None = None) -> None:
    """The package's stored objects are gone (after expiry or deletion). Committed."""
    db.session.execute(
        update(ExportPackage)
        .where(ExportPackage.id == package_id, ExportPackage.status != PackageStatus.AVAILABLE)
        .values(bytes_removed_at=database_time(now))
        .execution_options(synchronize_session=False)
    )
    db.session.commit()
