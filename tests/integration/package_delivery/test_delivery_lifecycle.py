"""Seed 000's transitions on ExportDelivery: each allowed move, and every refusal."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from app.domain.errors import TransitionRefused
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models.export_package import ExportPackage
from app.models.package_delivery import DeliveryStatus, ExportDelivery, ExportDeliveryAttempt
from app.models.types import utcnow
from app.services.work import claims
from app.services.workspace_export.delivery_work import DELIVERIES
from tests import factories

LEASE = timedelta(seconds=30)


@pytest.fixture
def delivery(world):
    execution = factories.make_execution(world.workspace)
    package = factories.make_package(execution)
    return factories.make_package_delivery(package, factories.make_destination(world.workspace))


def _status(delivery_id: int) -> str:
    db.session.expire_all()
    return db.session.get(ExportDelivery, delivery_id).status


def _set(delivery_id: int, **values) -> None:
    row = db.session.get(ExportDelivery, delivery_id)
    for name, value in values.items():
        setattr(row, name, value)
    db.session.commit()


def _start(delivery_id: int) -> int:
    return package_delivery_lifecycle.start(delivery_id, "worker-1", utcnow() + LEASE)


def _attempts(delivery_id: int) -> list[ExportDeliveryAttempt]:
    db.session.expire_all()
    return list(
        db.session.scalars(
            select(ExportDeliveryAttempt)
            .where(ExportDeliveryAttempt.delivery_id == delivery_id)
            .order_by(ExportDeliveryAttempt.number)
        )
    )


def test_create_adds_a_pending_row(world, delivery):
    other = factories.make_destination(world.workspace)

    created = package_delivery_lifecycle.create(
        workspace_id=world.workspace.id, package_id=delivery.package_id, destination_id=other.id
    )
    db.session.commit()

    assert _status(created) == DeliveryStatus.PENDING


def test_a_second_live_row_for_the_same_package_and_destination_is_not_made(world, delivery):
    created = package_delivery_lifecycle.create(
        workspace_id=world.workspace.id, package_id=delivery.package_id, destination_id=delivery.destination_id
    )
    db.session.commit()

    assert created is None
    assert db.session.scalar(select(func.count()).select_from(ExportDelivery)) == 1


def test_start_moves_pending_to_delivering_and_appends_attempt_one(delivery):
    number = _start(delivery.id)

    assert number == 1
    assert _status(delivery.id) == DeliveryStatus.DELIVERING
    assert [(a.number, a.outcome) for a in _attempts(delivery.id)] == [(1, None)]
    assert db.session.get(ExportDelivery, delivery.id).lease_holder == "worker-1"


def test_a_delivering_row_cannot_start_again(delivery):
    _start(delivery.id)

    with pytest.raises(TransitionRefused):
        _start(delivery.id)
    assert len(_attempts(delivery.id)) == 1


def test_a_delivery_of_a_package_past_its_retention_does_not_start(delivery):
    """Not yet expired by the sweep, but past its deadline: as Retry and Deliver refuse, so does start."""
    package = db.session.get(ExportPackage, delivery.package_id)
    package.expires_at = utcnow() - timedelta(minutes=1)
    db.session.commit()

    with pytest.raises(TransitionRefused):
        _start(delivery.id)
    assert _status(delivery.id) == DeliveryStatus.PENDING
    assert _attempts(delivery.id) == []


def test_delivered_records_the_location_and_ends_the_attempt(delivery):
    number = _start(delivery.id)

    package_delivery_lifecycle.delivered(delivery.id, number, "s3://bucket/path/")

    row = db.session.get(ExportDelivery, delivery.id)
    assert (row.status, row.location) == (DeliveryStatus.DELIVERED, "s3://bucket/path/")
    assert row.delivered_at is not None
    assert [(a.number, a.outcome) for a in _attempts(delivery.id)] == [(1, "delivered")]


def test_a_delivered_row_never_starts_again(delivery):
    package_delivery_lifecycle.delivered(delivery.id, _start(delivery.id), "somewhere")

    with pytest.raises(TransitionRefused):
        _start(delivery.id)
    assert _status(delivery.id) == DeliveryStatus.DELIVERED


def test_a_stale_attempt_cannot_settle_the_row(delivery):
    number = _start(delivery.id)
    package_delivery_lifecycle.failed(delivery.id, number, "transient", "timeout", "slow", next_attempt_at=utcnow())
    newer = _start(delivery.id)

    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.delivered(delivery.id, number, "somewhere")
    assert (newer, _status(delivery.id)) == (2, DeliveryStatus.DELIVERING)


def test_a_transient_failure_records_its_retry_time_and_frees_the_dispatch(delivery):
    _set(delivery.id, job_id="package-delivery-1-a")
    number = _start(delivery.id)
    retry_at = utcnow() + timedelta(minutes=1)

    package_delivery_lifecycle.failed(
        delivery.id, number, "transient", "SlowDown", "SlowDown: Reduce your rate.", retry_at
    )

    row = db.session.get(ExportDelivery, delivery.id)
    assert (row.status, row.failure_class, row.failure_code) == (DeliveryStatus.FAILED, "transient", "SlowDown")
    assert (row.next_attempt_at, row.job_id) == (retry_at, None)
    attempt = _attempts(delivery.id)[0]
    assert (attempt.outcome, attempt.failure_class) == ("failed", "transient")
    assert attempt.summary == "SlowDown: Reduce your rate."


def test_a_transient_failure_restarts_only_once_its_retry_time_has_come(delivery):
    number = _start(delivery.id)
    package_delivery_lifecycle.failed(
        delivery.id, number, "transient", "timeout", "slow", utcnow() + timedelta(minutes=5)
    )

    with pytest.raises(TransitionRefused):
        _start(delivery.id)
    assert (
        package_delivery_lifecycle.start(delivery.id, "w", utcnow() + LEASE, now=utcnow() + timedelta(minutes=6)) == 2
    )
    assert [a.number for a in _attempts(delivery.id)] == [1, 2]


def test_a_permanent_failure_never_restarts(delivery):
    number = _start(delivery.id)
    package_delivery_lifecycle.failed(delivery.id, number, "permanent", "AccessDenied", "AccessDenied: no")

    with pytest.raises(TransitionRefused):
        _start(delivery.id)
    assert _status(delivery.id) == DeliveryStatus.FAILED


def test_a_failure_is_refused_unless_the_row_is_delivering(delivery):
    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.failed(delivery.id, 0, "permanent", "AccessDenied", "no")
    assert _status(delivery.id) == DeliveryStatus.PENDING


def test_the_watchdog_cannot_fail_an_attempt_whose_lease_is_alive(delivery):
    number = _start(delivery.id)

    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.failed(
            delivery.id, number, "transient", "worker_stopped", "stopped", utcnow(), lease_lapsed_before=utcnow()
        )
    assert _status(delivery.id) == DeliveryStatus.DELIVERING


def test_withhold_moves_pending_to_withheld_only(delivery):
    package_delivery_lifecycle.withhold(delivery.id)
    db.session.commit()
    assert _status(delivery.id) == DeliveryStatus.WITHHELD

    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.withhold(delivery.id)


def test_a_withheld_row_does_not_start(delivery):
    package_delivery_lifecycle.withhold(delivery.id)
    db.session.commit()

    with pytest.raises(TransitionRefused):
        _start(delivery.id)


@pytest.mark.parametrize("status", ["pending", "failed", "withheld"])
def test_unfinished_rows_expire(delivery, status):
    _set(delivery.id, status=status, failure_code="x" if status == "failed" else None)

    package_delivery_lifecycle.expire(delivery.id)
    db.session.commit()

    assert _status(delivery.id) == DeliveryStatus.EXPIRED


@pytest.mark.parametrize("status", ["delivering", "delivered", "superseded", "expired"])
def test_settled_or_running_rows_do_not_expire(delivery, status):
    _set(delivery.id, status=status)

    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.expire(delivery.id)
    assert _status(delivery.id) == status


def test_expire_unfinished_expires_only_the_package_s_unfinished_rows(world, delivery):
    delivered_row = factories.make_package_delivery(
        delivery.package, factories.make_destination(world.workspace), status="delivered"
    )

    count = package_delivery_lifecycle.expire_unfinished(delivery.package_id)
    db.session.commit()

    assert count == 1
    assert (_status(delivery.id), _status(delivered_row.id)) == (DeliveryStatus.EXPIRED, DeliveryStatus.DELIVERED)


def test_supersede_and_replace_a_failed_row(world, delivery):
    number = _start(delivery.id)
    package_delivery_lifecycle.failed(delivery.id, number, "permanent", "AccessDenied", "no")

    package_delivery_lifecycle.supersede(delivery.id, world.admin.id)
    replacement = db.session.get(ExportDelivery, package_delivery_lifecycle.create_replacement(delivery.id))
    db.session.commit()

    old = db.session.get(ExportDelivery, delivery.id)
    assert (old.status, old.superseded_by_id) == (DeliveryStatus.SUPERSEDED, world.admin.id)
    assert (replacement.status, replacement.replaces_id) == (DeliveryStatus.PENDING, delivery.id)
    assert (replacement.package_id, replacement.destination_id) == (old.package_id, old.destination_id)


@pytest.mark.parametrize("status", ["pending", "delivering", "delivered", "withheld", "expired"])
def test_only_a_failed_row_can_be_superseded(world, delivery, status):
    _set(delivery.id, status=status)

    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.supersede(delivery.id, world.admin.id)


def test_a_superseded_row_never_starts_again(world, delivery):
    package_delivery_lifecycle.failed(delivery.id, _start(delivery.id), "transient", "timeout", "slow", utcnow())
    package_delivery_lifecycle.supersede(delivery.id, world.admin.id)
    db.session.commit()

    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.start(delivery.id, "w", utcnow() + LEASE, now=utcnow() + timedelta(days=1))
    assert _status(delivery.id) == DeliveryStatus.SUPERSEDED


def test_a_row_is_replaced_once(world, delivery):
    package_delivery_lifecycle.failed(delivery.id, _start(delivery.id), "permanent", "AccessDenied", "no")
    package_delivery_lifecycle.supersede(delivery.id, world.admin.id)
    package_delivery_lifecycle.create_replacement(delivery.id)
    db.session.commit()

    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.create_replacement(delivery.id)


def test_a_row_that_is_not_superseded_has_no_replacement(delivery):
    with pytest.raises(TransitionRefused):
        package_delivery_lifecycle.create_replacement(delivery.id)


def test_dispatch_is_claimed_once_from_the_job_id_seen(delivery):
    claims.claim(DELIVERIES, delivery.id, None, "job-a")

    with pytest.raises(TransitionRefused):
        claims.claim(DELIVERIES, delivery.id, None, "job-b")
    assert db.session.get(ExportDelivery, delivery.id).job_id == "job-a"
