"""Package deliveries (DESIGN section 8; seed 000): a package copied to one destination, with
every transfer attempt.

The lifecycle lives in app/domain/workspace_export/package_delivery_lifecycle.py: each transition
is one guarded statement there (INV-12); nothing else writes the status column.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.types import (
    SUMMARY_LIMIT,
    LeaseColumns,
    UTCDateTime,
    database_now,
    newest_first_indexes,
    one_of,
    utcnow,
)

if TYPE_CHECKING:
    from app.models.export_destination import ExportDestination
    from app.models.export_package import ExportPackage


# A delivery's and an attempt's failure code: a destination's error code, cut to this length.
FAILURE_CODE_LIMIT = 60


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    DELIVERING = "delivering"
    DELIVERED = "delivered"
    FAILED = "failed"
    WITHHELD = "withheld"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"


class FailureClass(StrEnum):
    TRANSIENT = "transient"  # timeouts, 5xx, throttling: retried with backoff
    PERMANENT = "permanent"  # access denied, no such bucket, bad credentials: stops and notifies


class ExportDelivery(LeaseColumns, Model):
    """A package's delivery to one destination (seed 000). A superseded row stays as history; its
    replacement is a new row (`replaces_id`)."""

    __tablename__ = "data_export_deliveries"
    __table_args__ = (
        CheckConstraint(one_of("status", DeliveryStatus), name="status"),
        CheckConstraint(f"failure_class IS NULL OR {one_of('failure_class', FailureClass)}", name="failure_class"),
        CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name="failure_code"),
        # One live delivery per package and destination; superseded rows are history.
        Index(
            "data_export_deliveries_live_uidx",
            "package_id",
            "destination_id",
            unique=True,
            postgresql_where=text("status <> 'superseded'"),
            sqlite_where=text("status <> 'superseded'"),
        ),
        Index("ix_data_export_deliveries_due", "status", "next_attempt_at"),
        *newest_first_indexes("data_export_deliveries", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    package_id: Mapped[int] = mapped_column(ForeignKey("data_export_artifacts.id", ondelete="CASCADE"), index=True)
    destination_id: Mapped[int] = mapped_column(ForeignKey("data_export_destinations.id"), index=True)
    status: Mapped[str] = mapped_column(String(12), default=DeliveryStatus.PENDING)
    attempt_count: Mapped[int] = mapped_column(default=0)
    # When a transiently failed delivery may be retried; NULL otherwise.
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    failure_class: Mapped[str | None] = mapped_column(String(10))
    failure_code: Mapped[str | None] = mapped_column(String(FAILURE_CODE_LIMIT))
    failure_summary: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))
    # Where the package landed ("s3://bucket/path/…" or the directory path), once delivered.
    location: Mapped[str | None] = mapped_column(String(600))
    replaces_id: Mapped[int | None] = mapped_column(ForeignKey("data_export_deliveries.id"))
    superseded_by_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    job_id: Mapped[str | None] = mapped_column(String(100))
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    package: Mapped[ExportPackage] = relationship(back_populates="deliveries")
    destination: Mapped[ExportDestination] = relationship()
    attempts: Mapped[list[ExportDeliveryAttempt]] = relationship(
        back_populates="delivery", order_by="ExportDeliveryAttempt.number", cascade="all, delete-orphan"
    )


class DeliveryAttemptColumns:
    """What an attempt at a delivery to a destination records, a package's or a schedule run's
    file: its number, when it started and ended, and how (a failure's class, code and summary)."""

    number: Mapped[int]
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=database_now())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    outcome: Mapped[str | None] = mapped_column(String(10))
    failure_class: Mapped[str | None] = mapped_column(String(10))
    failure_code: Mapped[str | None] = mapped_column(String(FAILURE_CODE_LIMIT))
    summary: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))


class ExportDeliveryAttempt(DeliveryAttemptColumns, Model):
    """One transfer attempt, appended; its number is allocated under the delivery's row lock."""

    __tablename__ = "data_export_delivery_attempts"
    __table_args__ = (
        UniqueConstraint("delivery_id", "number"),
        CheckConstraint("outcome IS NULL OR outcome IN ('delivered', 'failed')", name="outcome"),
        CheckConstraint(f"failure_class IS NULL OR {one_of('failure_class', FailureClass)}", name="failure_class"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("data_export_deliveries.id", ondelete="CASCADE"), index=True)

    delivery: Mapped[ExportDelivery] = relationship(back_populates="attempts")
