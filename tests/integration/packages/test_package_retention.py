"""Early deletion and the expiry sweep of workspace-export packages (seed 001): the guarded
settlement, its audit event, the bytes under the package prefix removed (nothing else), and the
unfinished deliveries expired; the sweep is idempotent and safe to run twice at once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent
from app.models.export_package import ExportPackage
from app.models.package_delivery import ExportDelivery
from app.models.types import utcnow
from app.services.workspace_export import package_retention
from app.services.workspace_export.package_retention import PackageNotDeletable, delete_early, sweep_expired_packages
from app.storage import get_storage
from tests import factories
from tests.fixtures.workers import wait_for
from tests.integration.packages.threads import in_thread


def _stored_package(export_world, **overrides) -> ExportPackage:
    """A package with a manifest and two volumes stored under its prefix."""
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    package = factories.make_package(execution, **overrides)
    storage = get_storage()
    for name in ("manifest.json", "teams-0001.csv.zip", "people-0001.csv.zip"):
        storage.put_bytes(package.prefix + name, b"package bytes")
    return package


def _package(package_id: int) -> ExportPackage:
    db.session.rollback()
    return db.session.get(ExportPackage, package_id, populate_existing=True)


def _delivery_statuses(package: ExportPackage) -> dict[int, str]:
    db.session.rollback()
    return dict(
        db.session.execute(
            select(ExportDelivery.destination_id, ExportDelivery.status).where(ExportDelivery.package_id == package.id)
        ).all()
    )


def test_early_deletion_removes_the_bytes_and_is_audited(export_world):
    package = _stored_package(export_world)
    neighbour = _stored_package(export_world)

    delete_early(export_world.workspace.id, package.id, export_world.admin)

    stored = _package(package.id)
    assert stored.status == "deleted" and stored.deleted_by_id == export_world.admin.id
    assert stored.bytes_removed_at is not None
    assert get_storage().list_keys(package.prefix) == []
    assert len(get_storage().list_keys(neighbour.prefix)) == 3
    [event] = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "export.package_deleted")).all()
    assert (event.subject_type, event.subject_id, event.actor_id) == (
        "export_package",
        package.id,
        export_world.admin.id,
    )


def test_a_second_deletion_is_refused_with_a_message(export_world):
    package = _stored_package(export_world)
    delete_early(export_world.workspace.id, package.id, export_world.admin)

    with pytest.raises(PackageNotDeletable, match="cannot be deleted: it is already deleted"):
        delete_early(export_world.workspace.id, package.id, export_world.admin)
    assert len(db.session.scalars(select(AuditEvent).where(AuditEvent.action == "export.package_deleted")).all()) == 1


def test_an_expired_package_cannot_be_deleted(export_world):
    package = _stored_package(export_world, status="expired")

    with pytest.raises(PackageNotDeletable, match="already expired"):
        delete_early(export_world.workspace.id, package.id, export_world.admin)


def test_a_deletion_after_the_deadline_expires_the_package_instead(export_world):
    """Past its deadline, not yet swept: the package expires, as the sweep would; nothing says deleted."""
    package = _stored_package(export_world, expires_at=utcnow() - timedelta(minutes=1))

    with pytest.raises(PackageNotDeletable, match="it has expired instead of being deleted"):
        delete_early(export_world.workspace.id, package.id, export_world.admin)

    stored = _package(package.id)
    assert (stored.status, stored.deleted_by_id) == ("expired", None)
    assert get_storage().list_keys(package.prefix) == []
    assert db.session.scalars(select(AuditEvent).where(AuditEvent.action == "export.package_deleted")).all() == []


def test_another_workspaces_package_cannot_be_deleted(export_world):
    package = _stored_package(export_world)

    with pytest.raises(PackageNotDeletable, match="does not exist in this workspace"):
        delete_early(export_world.other_workspace.id, package.id, export_world.other_admin)
    assert _package(package.id).status == "available"


def test_early_deletion_expires_the_unfinished_deliveries_and_keeps_the_delivered(export_world):
    package = _stored_package(export_world)
    pending, failed, withheld, delivered = (factories.make_destination(export_world.workspace) for _ in range(4))
    factories.make_package_delivery(package, pending)
    factories.make_package_delivery(
        package, failed, status="failed", failure_code="timeout", failure_class="transient", next_attempt_at=utcnow()
    )
    factories.make_package_delivery(package, withheld, status="withheld")
    factories.make_package_delivery(package, delivered, status="delivered", location="exports/x")

    delete_early(export_world.workspace.id, package.id, export_world.admin)

    assert _delivery_statuses(package) == {
        pending.id: "expired",
        failed.id: "expired",
        withheld.id: "expired",
        delivered.id: "delivered",
    }


def test_the_sweep_expires_packages_past_their_deadline_and_removes_their_bytes(export_world):
    past = _stored_package(export_world, expires_at=utcnow() - timedelta(minutes=1))
    kept = _stored_package(export_world, expires_at=utcnow() + timedelta(days=1))
    destination = factories.make_destination(export_world.workspace)
    factories.make_package_delivery(past, destination)

    sweep_expired_packages(utcnow())

    expired = _package(past.id)
    assert expired.status == "expired" and expired.settled_at is not None and expired.bytes_removed_at is not None
    assert get_storage().list_keys(past.prefix) == []
    assert _delivery_statuses(past) == {destination.id: "expired"}
    assert _package(kept.id).status == "available"
    assert len(get_storage().list_keys(kept.prefix)) == 3


def test_a_second_sweep_changes_nothing(export_world):
    past = _stored_package(export_world, expires_at=utcnow() - timedelta(minutes=1))
    sweep_expired_packages(utcnow())
    removed_at = _package(past.id).bytes_removed_at

    assert sweep_expired_packages(utcnow()) == 0
    assert _package(past.id).bytes_removed_at == removed_at


def test_the_sweep_finishes_a_deletion_whose_bytes_were_left(export_world):
    """A deletion committed but stopped before removing the bytes (the store was down)."""
    package = _stored_package(export_world, status="deleted", settled_at=utcnow())

    sweep_expired_packages(utcnow())

    assert get_storage().list_keys(package.prefix) == []
    assert _package(package.id).bytes_removed_at is not None


def test_the_sweep_expires_a_delivery_that_failed_after_its_package_settled(export_world):
    package = _stored_package(export_world, status="expired", settled_at=utcnow(), bytes_removed_at=utcnow())
    destination = factories.make_destination(export_world.workspace)
    factories.make_package_delivery(
        package, destination, status="failed", failure_code="timeout", failure_class="transient"
    )

    assert sweep_expired_packages(utcnow()) == 1
    assert _delivery_statuses(package) == {destination.id: "expired"}


def test_two_sweeps_at_once_settle_each_package_once(app, export_world, hold_lock):
    packages = [_stored_package(export_world, expires_at=utcnow() - timedelta(minutes=1)) for _ in range(3)]
    db.session.rollback()  # the test's own session must not hold the table while the lock is taken
    lock = hold_lock("LOCK TABLE data_export_artifacts IN ACCESS EXCLUSIVE MODE")
    sweeps = [in_thread(app, lambda: package_retention.sweep_expired_packages(utcnow())) for _ in range(2)]
    wait_for(lambda: lock.waiters() == 2, what="both sweeps to wait for the packages table")
    lock.release()
    for thread, _ in sweeps:
        thread.join(30)

    assert [outcome.error for _, outcome in sweeps] == [None, None]
    for package in packages:
        stored = _package(package.id)
        assert stored.status == "expired" and stored.bytes_removed_at is not None
        assert get_storage().list_keys(package.prefix) == []
