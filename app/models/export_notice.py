"""Workspace export notices (DESIGN section 8): the emails about a package ready, an execution or
a delivery failed, or a package deleted by staff, one per subject, kind and person.

Their lifecycle lives in app/domain/workspace_export/export_notice.py; they are a kind of the work
engine (app/services/workspace_export/notice_work.py): an attempt sends under a lease, and the
engine's claim names the job carrying it (`job_id`, `dispatched_at`).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import SUMMARY_LIMIT, LeaseColumns, UTCDateTime, one_of, utcnow


class NoticeKind(StrEnum):
    PACKAGE_READY = "package_ready"
    EXECUTION_FAILED = "execution_failed"
    DELIVERY_FAILED = "delivery_failed"
    PACKAGE_DELETED = "package_deleted"  # deleted early by Rhythm staff


class NoticeStatus(StrEnum):
    PENDING = "pending"
    SENDING = "sending"  # an attempt holds it under a lease
    SENT = "sent"
    FAILED = "failed"


class ExportNotice(LeaseColumns, Model):
    """A notice email, recorded once per (subject, kind, person) so a retried step never notifies twice."""

    __tablename__ = "data_export_notices"
    __table_args__ = (
        CheckConstraint(one_of("kind", NoticeKind), name="kind"),
        CheckConstraint(one_of("status", NoticeStatus), name="status"),
        CheckConstraint("subject_type IN ('execution', 'package', 'delivery')", name="subject_type"),
        UniqueConstraint("subject_type", "subject_id", "kind", "person_id", name="data_export_notices_once_uidx"),
        Index("ix_data_export_notices_pending", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    subject_type: Mapped[str] = mapped_column(String(10))
    subject_id: Mapped[int]
    kind: Mapped[str] = mapped_column(String(20))
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(10), default=NoticeStatus.PENDING)
    attempt_count: Mapped[int] = mapped_column(default=0)
    # When a pending notice whose last attempt failed may be tried again; NULL otherwise.
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))
    message_id: Mapped[str | None] = mapped_column(String(300))
    job_id: Mapped[str | None] = mapped_column(String(100))
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
