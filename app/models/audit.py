"""The audit log: who did what to which record, when and why, written in the same transaction as
the change it records (taking ownership of a schedule, later settings, destinations, deletions
and staff actions)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime, utcnow


class AuditEvent(Model):
    __tablename__ = "audit_events"
    # The audit page reads a workspace's events newest first by (created_at, id), a page at a time
    # (app/services/pages/list_pages.py): the index gives them in that order, ties included.
    __table_args__ = (Index("ix_audit_events_list_newest", "workspace_id", "created_at", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    # NULL only for events outside any workspace.
    workspace_id: Mapped[int | None] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    # NULL for the product's own actions (an automatic pause).
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    action: Mapped[str] = mapped_column(String(80))
    subject_type: Mapped[str] = mapped_column(String(40))
    subject_id: Mapped[int]
    reason: Mapped[str | None] = mapped_column(Text)
    details: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
