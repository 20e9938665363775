"""A package's early deletion and the retention sweep against its deliveries (issue 16, item 4):
no bytes are removed under a delivery that is copying, a destination never keeps volumes without
their manifest, and no storage key of the product reaches what a customer reads."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text

from app.domain.errors import TransitionRefused
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models import AuditEvent, Person
from app.models.export_notice import ExportNotice
from app.models.export_package import ExportPackage
from app.models.package_delivery import DeliveryStatus, ExportDelivery, ExportDeliveryAttempt
from app.models.types import utcnow
from app.services.workspace_export import package_delivery, package_retention
from app.storage import get_storage
from tests import factories
from tests.fixtures.workers import wait_for
from tests.integration.package_delivery.delivery_reading import delivery_row
from tests.integration.packages.threads import in_thread


def _package(package_id: int) -> ExportPackage:
    db.session.rollback()
    return db.session.get(ExportPackage, package_id, populate_existing=True)


def _files(root) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _copying(package, destination) -> ExportDelivery:
    """A delivery whose worker is copying the package now (its lease is alive)."""
    delivery = factories.make_package_delivery(package, destination)
    package_delivery_lifecycle.start(delivery.id, "worker-copying", utcnow() + timedelta(minutes=1))
    return delivery


def test_early_deletion_is_refused_while_a_delivery_copies_the_package(stored_package, world, destinations_root):
    destination = factories.make_destination(world.workspace, name="Finance bucket")
    _copying(stored_package.package, destination)

    with pytest.raises(package_retention.PackageNotDeletable, match="being copied to Finance bucket right now"):
        package_retention.delete_early(world.workspace.id, stored_package.package.id, world.admin)

    assert _package(stored_package.package.id).status == "available"
    assert len(get_storage().list_keys(stored_package.package.prefix)) == len(stored_package.objects)
    assert db.session.scalar(select(func.count()).select_from(AuditEvent)) == 0


def test_early_deletion_goes_ahead_once_the_copy_has_ended(stored_package, world, destinations_root):
    delivery = _copying(stored_package.package, factories.make_destination(world.workspace))
    package_delivery_lifecycle.delivered(delivery.id, 1, "exports/x")

    package_retention.delete_early(world.workspace.id, stored_package.package.id, world.admin)

    assert _package(stored_package.package.id).status == "deleted"
    assert get_storage().list_keys(stored_package.package.prefix) == []


def test_a_delivery_whose_worker_died_does_not_hold_the_deletion_back(stored_package, world, destinations_root):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    package_delivery_lifecycle.start(delivery.id, "worker-gone", utcnow() - timedelta(seconds=1))

    package_retention.delete_early(world.workspace.id, stored_package.package.id, world.admin)

    assert _package(stored_package.package.id).status == "deleted"


def test_the_sweep_leaves_a_due_package_being_copied_for_a_later_turn(stored_package, world, destinations_root):
    package = stored_package.package
    delivery = _copying(package, factories.make_destination(world.workspace))  # started inside its retention
    package.expires_at = utcnow() - timedelta(minutes=1)
    db.session.commit()

    package_retention.sweep_expired_packages(utcnow())

    assert _package(package.id).status == "available"
    assert len(get_storage().list_keys(package.prefix)) == len(stored_package.objects)

    package_delivery_lifecycle.delivered(delivery.id, 1, "exports/x")
    package_retention.sweep_expired_packages(utcnow())

    swept = _package(package.id)
    assert swept.status == "expired" and swept.bytes_removed_at is not None
    assert get_storage().list_keys(package.prefix) == []


def _deleting(world, package) -> Callable[[], None]:
    """The administrator's early deletion, for a thread of its own (ids read here, not there)."""
    workspace_id, package_id, admin_id = world.workspace.id, package.id, world.admin.id
    return lambda: package_retention.delete_early(workspace_id, package_id, db.session.get_one(Person, admin_id))


def _starting(delivery) -> Callable[[], int]:
    delivery_id = delivery.id
    return lambda: package_delivery_lifecycle.start(delivery_id, "worker-1", utcnow() + timedelta(minutes=1))


def _waiting_for_a_lock(statement_start: str) -> int:
    """Sessions whose statement, starting so, waits for a lock."""
    return db.session.scalar(
        text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query LIKE :start"
        ),
        {"start": statement_start + "%"},
    )


def test_a_deletion_that_waited_for_a_starting_copy_is_refused(
    app, stored_package, world, destinations_root, hold_lock
):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    db.session.rollback()
    # The start has share-locked the package and waits to update the delivery.
    lock = hold_lock("SELECT id FROM data_export_deliveries WHERE id = :id FOR UPDATE", id=delivery.id)
    start = in_thread(app, _starting(delivery))
    wait_for(lambda: lock.waiters() == 1, what="the start to wait for the delivery's row")
    deletion = in_thread(app, _deleting(world, stored_package.package))
    wait_for(lambda: _waiting_for_a_lock("SELECT data_export_artifacts.id") == 1, what="the deletion to wait")
    lock.release()
    for thread, _ in (start, deletion):
        thread.join(30)

    assert (start[1].error, start[1].value) == (None, 1)
    assert isinstance(deletion[1].error, package_retention.PackageNotDeletable)
    assert _package(stored_package.package.id).status == "available"
    assert len(get_storage().list_keys(stored_package.package.prefix)) == len(stored_package.objects)


def test_a_start_that_waited_for_a_deletion_is_refused(app, stored_package, world, destinations_root, hold_lock):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    db.session.rollback()
    # The deletion has locked the package, settled it, and waits to write its audit event.
    lock = hold_lock("LOCK TABLE audit_events IN ACCESS EXCLUSIVE MODE")
    deletion = in_thread(app, _deleting(world, stored_package.package))
    wait_for(lambda: lock.waiters() == 1, what="the deletion to wait for the audit table")
    start = in_thread(app, _starting(delivery))
    wait_for(lambda: _waiting_for_a_lock("SELECT data_export_artifacts.status") == 1, what="the start to wait")
    lock.release()
    for thread, _ in (deletion, start):
        thread.join(30)

    assert deletion[1].error is None
    assert isinstance(start[1].error, TransitionRefused)
    assert delivery_row(delivery.id).attempt_count == 0
    assert _package(stored_package.package.id).status == "deleted"


def test_a_delivery_cannot_start_once_its_package_was_deleted(stored_package, world, destinations_root):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    package_retention.delete_early(world.workspace.id, stored_package.package.id, world.admin)
    db.session.rollback()
    # The sweep has not expired the delivery yet: it is still pending.
    db.session.execute(
        ExportDelivery.__table__.update().where(ExportDelivery.id == delivery.id).values(status="pending")
    )
    db.session.commit()

    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.start(delivery.id, "worker-late", utcnow() + timedelta(minutes=1))

    assert delivery_row(delivery.id).attempt_count == 0


def test_an_interrupted_copy_leaves_nothing_at_the_destination(stored_package, world, destinations_root):
    # The second volume's file is gone from storage: the copy stops after writing the first.
    get_storage().delete(stored_package.package.prefix + "teams-0001.csv.zip")
    delivery = factories.make_package_delivery(
        stored_package.package, factories.make_destination(world.workspace, path="drop")
    )

    outcome = package_delivery.run_delivery(delivery.id)

    assert outcome == "failed"
    assert _files(destinations_root) == set()


def test_a_failed_attempt_also_removes_what_a_killed_attempt_left(stored_package, world, destinations_root):
    delivery = factories.make_package_delivery(
        stored_package.package, factories.make_destination(world.workspace, path="drop")
    )
    # An earlier attempt, killed mid-copy, left the second volume; this one fails at the first.
    expected = stored_package.expected_at("drop")
    [left_behind] = [path for path in expected if path.endswith("teams-0001.csv.zip")]
    (destinations_root / left_behind).parent.mkdir(parents=True)
    (destinations_root / left_behind).write_bytes(expected[left_behind])
    get_storage().delete(stored_package.package.prefix + "people-0001.csv.zip")

    assert package_delivery.run_delivery(delivery.id) == "failed"

    assert _files(destinations_root) == set()


def test_no_storage_key_reaches_a_delivery_s_summaries_or_its_notice(
    stored_package, world, destinations_root, smtp_server, mail_to_smtp_server
):
    get_storage().delete(stored_package.package.prefix + "teams-0001.csv.zip")
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))

    package_delivery.run_delivery(delivery.id)

    row = delivery_row(delivery.id)
    [attempt] = db.session.scalars(
        select(ExportDeliveryAttempt).where(ExportDeliveryAttempt.delivery_id == delivery.id)
    ).all()
    shown = [row.failure_summary, attempt.summary, smtp_server.messages[0].part("text/plain")]
    assert row.failure_code == "package_missing"
    assert "missing from Rhythm's storage" in row.failure_summary
    assert not [text for text in shown if stored_package.package.prefix in text or "teams-0001" in text]


def test_the_deletion_audit_event_names_no_storage_key(stored_package, world, destinations_root):
    package_retention.delete_early(world.workspace.id, stored_package.package.id, world.admin)

    [event] = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "export.package_deleted"))
    assert stored_package.package.prefix not in repr(event.details)


class _DeletedUnderTheCopy:
    """The product's storage, except that reading the package's second object first lets the
    copy's lease lapse (its worker froze) and deletes the package, as an administrator would."""

    def __init__(self, app, storage, world, delivery_id: int, package_id: int):
        self.app, self.storage, self.world = app, storage, world
        self.delivery_id, self.package_id = delivery_id, package_id
        self.reads = 0

    def __getattr__(self, name: str):
        return getattr(self.storage, name)

    def read_chunks(self, key: str, chunk_size: int = 256 * 1024):
        self.reads += 1
        if self.reads == 2:
            thread, outcome = in_thread(self.app, self._lapse_and_delete)
            thread.join(30)
            assert outcome.error is None, outcome.error
        return self.storage.read_chunks(key, chunk_size)

    def _lapse_and_delete(self) -> None:
        db.session.execute(
            ExportDelivery.__table__.update()
            .where(ExportDelivery.id == self.delivery_id)
            .values(lease_expires_at=utcnow() - timedelta(seconds=1))
        )
        db.session.commit()
        package_retention.delete_early(self.world.workspace.id, self.package_id, self.world.admin)


def test_a_copy_whose_package_was_deleted_under_it_is_removed_and_expires_without_a_notice(
    app, stored_package, world, destinations_root, smtp_server, mail_to_smtp_server, monkeypatch
):
    delivery = factories.make_package_delivery(
        stored_package.package, factories.make_destination(world.workspace, path="drop")
    )
    storage = _DeletedUnderTheCopy(app, get_storage(), world, delivery.id, stored_package.package.id)
    monkeypatch.setattr(package_delivery, "get_storage", lambda: storage)

    outcome = package_delivery.run_delivery(delivery.id)

    row = delivery_row(delivery.id)
    assert (outcome, row.status) == ("expired", DeliveryStatus.EXPIRED)
    assert row.failure_code == package_delivery.PACKAGE_WITHDRAWN
    assert _files(destinations_root) == set()
    assert db.session.scalar(select(func.count()).select_from(ExportNotice)) == 0
    assert smtp_server.messages == []


def test_the_delete_page_says_the_package_is_being_copied(client, auth, stored_package, world, destinations_root):
    _copying(stored_package.package, factories.make_destination(world.workspace, name="Finance bucket"))
    auth.login(world.admin.email)

    response = client.post(
        f"/w/{world.workspace.id}/export/packages/{stored_package.package.id}/delete", data={"confirm": "y"}
    )

    assert response.status_code == 409
    assert "being copied to Finance bucket right now" in response.get_data(as_text=True)
    assert _package(stored_package.package.id).status == "available"
