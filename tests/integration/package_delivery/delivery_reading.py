"""Reading a delivery and its attempts as other processes left them (each read starts afresh)."""

from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from app.models.package_delivery import ExportDelivery, ExportDeliveryAttempt


def delivery_row(delivery_id: int) -> ExportDelivery:
    db.session.rollback()
    return db.session.get_one(ExportDelivery, delivery_id, populate_existing=True)


def attempt_outcomes(delivery_id: int) -> list[tuple]:
    """(number, outcome, failure class, failure code) of each attempt, in order."""
    db.session.rollback()
    return [
        (a.number, a.outcome, a.failure_class, a.failure_code)
        for a in db.session.scalars(
            select(ExportDeliveryAttempt)
            .where(ExportDeliveryAttempt.delivery_id == delivery_id)
            .order_by(ExportDeliveryAttempt.number)
        )
    ]
