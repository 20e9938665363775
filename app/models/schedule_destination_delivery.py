"""A schedule run's delivery to each destination its schedule chose (DESIGN section 7): one row per
(run, destination), its attempts appended. Its transitions are in
app/domain/schedules/destination_delivery.py; the copying in app/services/schedules/destination_deliveries.py.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.export_destination import ANNOUNCING_KINDS, LINKED_KINDS, ExportDestination
from app.models.package_delivery import FAILURE_CODE_LIMIT, DeliveryAttemptColumns, FailureClass
from app.models.schedule import DownloadLinkColumns
from app.models.types import SUMMARY_LIMIT, LeaseColumns, UTCDateTime, newest_first_indexes, one_of, utcnow

if TYPE_CHECKING:
    from app.models.schedule import ScheduleRun


class DestinationDeliveryStatus(StrEnum):
    PENDING = "pending"
    DELIVERING = "delivering"
    DELIVERED = "delivered"
    FAILED = "failed"


class DestinationDelivery(DownloadLinkColumns, LeaseColumns, Model):
    """A run's file copied to (or announced at) one destination: one row per (run, destination).

    `pending → delivering → delivered | failed`; `failed → delivering` when a transient failure's
    retry time comes or an administrator retries. A run its send condition skips makes none.
    Each transition is one guarded statement in app/domain/schedules/destination_delivery.py;
    attempts are appended, their number fencing every write at the destination. A webhook's
    message links the file by a signed token naming `link_nonce`, not the id.
    """

    __tablename__ = "schedule_destination_deliveries"
    __table_args__ = (
        UniqueConstraint("run_id", "destination_id", name="schedule_destination_deliveries_run_uidx"),
        CheckConstraint(one_of("status", DestinationDeliveryStatus), name="status"),
        CheckConstraint(f"failure_class IS NULL OR {one_of('failure_class', FailureClass)}", name="failure_class"),
        CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name="failure_code"),
        Index("ix_schedule_destination_deliveries_due", "status", "next_attempt_at"),
        *newest_first_indexes("schedule_destination_deliveries", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("schedule_runs.id", ondelete="CASCADE"), index=True)
    destination_id: Mapped[int] = mapped_column(ForeignKey("data_export_destinations.id"), index=True)
    status: Mapped[str] = mapped_column(String(12), default=DestinationDeliveryStatus.PENDING)
    attempt_count: Mapped[int] = mapped_column(default=0)
    # When a transiently failed delivery may be tried again (or an administrator's Retry); NULL otherwise.
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    failure_class: Mapped[str | None] = mapped_column(String(10))
    failure_code: Mapped[str | None] = mapped_column(String(FAILURE_CODE_LIMIT))
    failure_summary: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))
    # The file's name under the destination's path, `<schedule-slug>/<occurrence UTC>_<file name>`,
    # fixed when the row is made so every attempt writes the same name.
    target_key: Mapped[str] = mapped_column(String(500))
    # Where it landed, for people to read ("s3://bucket/…", the folder under the root), once delivered.
    location: Mapped[str | None] = mapped_column(String(600))
    job_id: Mapped[str | None] = mapped_column(String(100))
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    run: Mapped[ScheduleRun] = relationship(back_populates="destination_deliveries")
    destination: Mapped[ExportDestination] = relationship()

    @property
    def announces(self) -> bool:
        """Its destination is told the file is ready (a webhook, a Slack channel) rather than sent it."""
        return self.destination.kind in ANNOUNCING_KINDS

    @property
    def carries_link(self) -> bool:
        """Its message carries a link that opens the file with no sign-in (a webhook), so its downloads count."""
        return self.destination.kind in LINKED_KINDS

    attempts: Mapped[list[DestinationDeliveryAttempt]] = relationship(
        back_populates="delivery", order_by="DestinationDeliveryAttempt.number", cascade="all, delete-orphan"
    )


class DestinationDeliveryAttempt(DeliveryAttemptColumns, Model):
    """One attempt at a destination delivery, appended; numbered under the delivery's row lock."""

    __tablename__ = "schedule_destination_delivery_attempts"
    __table_args__ = (
        UniqueConstraint("delivery_id", "number"),
        CheckConstraint("outcome IS NULL OR outcome IN ('delivered', 'failed')", name="outcome"),
        CheckConstraint(f"failure_class IS NULL OR {one_of('failure_class', FailureClass)}", name="failure_class"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("schedule_destination_deliveries.id", ondelete="CASCADE"), index=True
    )

    delivery: Mapped[DestinationDelivery] = relationship(back_populates="attempts")
