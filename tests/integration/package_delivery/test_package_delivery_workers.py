"""Deliveries on real rq workers: a destination unreachable for a while, two workers on one
delivery, and schedulers dispatching a due retry once."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from moto.server import ThreadedMotoServer
from rq.job import Job
from sqlalchemy import text

from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models.package_delivery import DeliveryStatus, ExportDelivery
from app.models.types import utcnow
from app.services.work.claims import dispatch_pending
from app.services.work.queue import WorkPriority, redis_connection, work_queue
from app.services.workspace_export import package_delivery, package_delivery_actions
from app.services.workspace_export.delivery_work import DELIVERIES
from tests import factories
from tests.fixtures.s3 import BUCKET
from tests.fixtures.workers import wait_for
from tests.integration.package_delivery.delivery_reading import attempt_outcomes, delivery_row


def _left_behind():
    """The creation time of a pending delivery whose maker died before running it."""
    return utcnow() - timedelta(minutes=5)


def _starts_waiting_for_a_lock() -> int:
    """Sessions whose UPDATE of a delivery waits for a lock: the second worker waits behind the
    first one (for the row's tuple lock), not directly behind the test's lock, so this counts
    waiting sessions rather than the lock holder's direct waiters."""
    return db.session.scalar(
        text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query LIKE 'UPDATE data_export_deliveries%'"
        )
    )


def _time_passes(delivery_id: int) -> None:
    """The retry's time has come (the backoff is minutes; the test does not wait for it)."""
    row = db.session.get(ExportDelivery, delivery_id, populate_existing=True)
    row.next_attempt_at = utcnow() - timedelta(seconds=1)
    db.session.commit()


def _settled_attempts(delivery_id: int, count: int):
    def settled():
        row = delivery_row(delivery_id)
        return row.status in (DeliveryStatus.FAILED, DeliveryStatus.DELIVERED) and row.attempt_count == count

    return settled


def test_a_destination_unreachable_for_a_while_is_retried_until_delivered(
    stored_package, world, s3_destination, s3_account, free_port, start_worker
):
    destination = s3_destination(world.workspace, endpoint_url=f"http://127.0.0.1:{free_port}", path="drop")
    delivery = factories.make_package_delivery(stored_package.package, destination, created_at=_left_behind())
    start_worker()

    assert dispatch_pending(DELIVERIES, utcnow()) == 1
    wait_for(_settled_attempts(delivery.id, 1), what="the first attempt")
    _time_passes(delivery.id)
    assert dispatch_pending(DELIVERIES, utcnow()) == 1
    wait_for(_settled_attempts(delivery.id, 2), what="the second attempt")

    # The endpoint comes back: a server on that port, with the same buckets and accounts.
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port, verbose=False)
    server.start()
    try:
        _time_passes(delivery.id)
        assert dispatch_pending(DELIVERIES, utcnow()) == 1
        wait_for(_settled_attempts(delivery.id, 3), what="the third attempt")
    finally:
        server.stop()

    assert delivery_row(delivery.id).status == DeliveryStatus.DELIVERED
    assert attempt_outcomes(delivery.id) == [
        (1, "failed", "transient", "connection_failed"),
        (2, "failed", "transient", "connection_failed"),
        (3, "delivered", None, None),
    ]
    listed = s3_account.client.list_objects_v2(Bucket=BUCKET)["Contents"]
    assert sorted(item["Key"] for item in listed) == sorted(stored_package.expected_at("drop"))


def test_two_workers_on_one_delivery_make_one_attempt_with_the_next_number(
    stored_package, world, destinations_root, start_worker, hold_lock
):
    delivery = factories.make_package_delivery(
        stored_package.package, factories.make_destination(world.workspace, path="drop")
    )
    first = package_delivery_lifecycle.start(delivery.id, "earlier-worker", utcnow() + timedelta(seconds=30))
    package_delivery_lifecycle.failed(delivery.id, first, "transient", "timeout", "ReadTimeoutError", utcnow())
    lock = hold_lock("SELECT id FROM data_export_deliveries WHERE id = :id FOR UPDATE", id=delivery.id)
    start_worker(DESTINATIONS_ROOT=str(destinations_root))
    start_worker(DESTINATIONS_ROOT=str(destinations_root))
    jobs = [
        work_queue(WorkPriority.BULK).enqueue(DELIVERIES.job_function, delivery.id, job_id=f"race-{name}")
        for name in ("a", "b")
    ]

    wait_for(lambda: _starts_waiting_for_a_lock() == 2, what="both workers waiting for the delivery's row lock")
    lock.release()
    wait_for(lambda: all(job.get_status(refresh=True) == "finished" for job in jobs), what="both jobs")

    assert delivery_row(delivery.id).status == DeliveryStatus.DELIVERED
    assert attempt_outcomes(delivery.id) == [(1, "failed", "transient", "timeout"), (2, "delivered", None, None)]
    results = sorted(Job.fetch(job.id, connection=redis_connection()).return_value() for job in jobs)
    assert results == ["delivered", "not_due"]
    delivered = {p.relative_to(destinations_root).as_posix() for p in destinations_root.rglob("*") if p.is_file()}
    assert delivered == set(stored_package.expected_at("drop"))


def test_two_schedulers_dispatch_a_due_retry_once(stored_package, world, destinations_root):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    number = package_delivery_lifecycle.start(delivery.id, "earlier-worker", utcnow() + timedelta(seconds=30))
    package_delivery_lifecycle.failed(delivery.id, number, "transient", "timeout", "ReadTimeoutError", utcnow())

    dispatched = [dispatch_pending(DELIVERIES, utcnow()), dispatch_pending(DELIVERIES, utcnow())]

    assert dispatched == [1, 0]
    assert work_queue(WorkPriority.BULK).job_ids == [delivery_row(delivery.id).job_id]


def test_a_fresh_pending_delivery_is_left_to_the_process_that_made_it(stored_package, world, destinations_root):
    factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))

    assert dispatch_pending(DELIVERIES, utcnow()) == 0
    assert dispatch_pending(DELIVERIES, utcnow() + timedelta(minutes=1)) == 1


def test_deliveries_to_disabled_destinations_or_of_expired_packages_are_not_dispatched(
    stored_package, world, destinations_root
):
    disabled = factories.make_destination(world.workspace, enabled=False)
    factories.make_package_delivery(stored_package.package, disabled, created_at=_left_behind())
    other_package = factories.make_package(factories.make_execution(world.workspace), status="expired")
    factories.make_package_delivery(
        other_package, factories.make_destination(world.workspace), created_at=_left_behind()
    )

    assert dispatch_pending(DELIVERIES, utcnow()) == 0
    assert work_queue(WorkPriority.BULK).job_ids == []


def test_a_delivery_of_a_package_past_its_retention_is_not_dispatched(stored_package, world, destinations_root):
    """Past its deadline and not yet swept: its start would be refused, so no job is made for it."""
    factories.make_package_delivery(
        stored_package.package, factories.make_destination(world.workspace), created_at=_left_behind()
    )
    stored_package.package.expires_at = utcnow() - timedelta(minutes=1)
    db.session.commit()

    assert dispatch_pending(DELIVERIES, utcnow()) == 0
    assert work_queue(WorkPriority.BULK).job_ids == []


def test_the_scheduler_and_a_worker_deliver_a_pending_delivery_nobody_ran(
    stored_package, world, destinations_root, start_worker, start_scheduler
):
    delivery = factories.make_package_delivery(
        stored_package.package,
        factories.make_destination(world.workspace, path="drop"),
        created_at=_left_behind(),
    )
    start_worker(DESTINATIONS_ROOT=str(destinations_root))
    start_scheduler(DESTINATIONS_ROOT=str(destinations_root))

    wait_for(lambda: delivery_row(delivery.id).status == DeliveryStatus.DELIVERED, what="the delivery")

    delivered = {p.relative_to(destinations_root).as_posix() for p in destinations_root.rglob("*") if p.is_file()}
    assert delivered == set(stored_package.expected_at("drop"))
    assert attempt_outcomes(delivery.id) == [(1, "delivered", None, None)]


def test_staff_supersede_a_failed_delivery_and_a_worker_delivers_its_replacement(
    stored_package, world, settings, app_for, destinations_root, start_worker
):
    delivery = factories.make_package_delivery(
        stored_package.package, factories.make_destination(world.workspace, path="drop")
    )
    # Failed for good: this server had no folder for directory destinations at the time.
    with app_for(dataclasses.replace(settings, destinations_root=None)).app_context():
        assert package_delivery.run_delivery(delivery.id) == "failed"
    start_worker(DESTINATIONS_ROOT=str(destinations_root))
    staff = factories.make_person(is_staff=True, staff_permissions=["staff.view", "staff.execute"])

    replacement_id = package_delivery_actions.supersede_and_replace(delivery.id, staff, "The folder is configured now")

    wait_for(lambda: delivery_row(replacement_id).status == DeliveryStatus.DELIVERED, what="the replacement")
    assert delivery_row(delivery.id).status == DeliveryStatus.SUPERSEDED
    assert attempt_outcomes(delivery.id) == [(1, "failed", "permanent", "directory_not_configured")]
    assert attempt_outcomes(replacement_id) == [(1, "delivered", None, None)]
    delivered = {p.relative_to(destinations_root).as_posix() for p in destinations_root.rglob("*") if p.is_file()}
    assert delivered == set(stored_package.expected_at("drop"))
