"""Package delivery attempts are append-only in PostgreSQL (seed 000; migration 012dde93e6d7): an
open attempt is ended once, an ended one never changes, and an attempt goes only with its
delivery."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models.package_delivery import ExportDeliveryAttempt
from app.models.types import utcnow
from tests import factories


@pytest.fixture
def ended_attempt(world) -> int:
    """A delivery whose first attempt failed; returns the delivery's id."""
    package = factories.make_package(factories.make_execution(world.workspace))
    delivery = factories.make_package_delivery(package, factories.make_destination(world.workspace))
    attempt = package_delivery_lifecycle.start(delivery.id, "worker-1", utcnow() + timedelta(minutes=1))
    package_delivery_lifecycle.failed(delivery.id, attempt, "permanent", "AccessDenied", "AccessDenied: Access Denied")
    return delivery.id


def _attempt_count() -> int:
    db.session.rollback()
    return db.session.scalar(select(func.count()).select_from(ExportDeliveryAttempt))


def test_an_ended_attempt_cannot_be_changed(ended_attempt):
    with pytest.raises(DBAPIError, match="is history: it cannot be changed"):
        db.session.execute(text("UPDATE data_export_delivery_attempts SET outcome = 'delivered', failure_code = NULL"))
    db.session.rollback()

    [attempt] = db.session.scalars(select(ExportDeliveryAttempt)).all()
    assert (attempt.outcome, attempt.failure_code) == ("failed", "AccessDenied")


def test_an_attempt_cannot_be_deleted_while_its_delivery_exists(ended_attempt):
    with pytest.raises(DBAPIError, match="is history: it cannot be deleted"):
        db.session.execute(text("DELETE FROM data_export_delivery_attempts"))
    db.session.rollback()

    assert _attempt_count() == 1


def test_an_attempt_goes_with_its_package_and_delivery(ended_attempt):
    db.session.execute(text("DELETE FROM data_export_artifacts"))
    db.session.commit()

    assert _attempt_count() == 0


def test_an_open_attempt_is_ended_by_its_outcome(world):
    package = factories.make_package(factories.make_execution(world.workspace))
    delivery = factories.make_package_delivery(package, factories.make_destination(world.workspace))
    attempt = package_delivery_lifecycle.start(delivery.id, "worker-1", utcnow() + timedelta(minutes=1))

    package_delivery_lifecycle.delivered(delivery.id, attempt, "s3://bucket/drop/")

    db.session.rollback()
    [row] = db.session.scalars(select(ExportDeliveryAttempt)).all()
    assert row.outcome == "delivered" and row.ended_at is not None
