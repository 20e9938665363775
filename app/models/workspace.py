"""Workspaces, the people who log in, and their memberships."""

from __future__ import annotations

import secrets
from datetime import datetime

from flask_login import UserMixin
from sqlalchemy import JSON, CheckConstraint, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.types import UTCDateTime, utcnow

WORKSPACE_STATUSES = ("live", "suspended", "closed")
ROLES = ("member", "admin")
MEMBERSHIP_GRANTS = ("schedules.manage", "schedules.external_recipients")
STAFF_PERMISSIONS = ("staff.view", "staff.execute")


class Workspace(Model):
    __tablename__ = "workspaces"
    __table_args__ = (
        CheckConstraint("status IN ('live', 'suspended', 'closed')", name="status"),
        CheckConstraint("attachment_limit_mb BETWEEN 1 AND 20", name="attachment_limit_mb"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20), default="live")
    sandbox: Mapped[bool] = mapped_column(default=False)
    # How many workspace exports the plan allows in any rolling 30 days.
    export_allowance: Mapped[int] = mapped_column(default=10)
    # strftime pattern for dates printed in reports (the workspace's locale format).
    date_format: Mapped[str] = mapped_column(String(20), default="%d/%m/%Y")
    # IANA time zone that files show time stamps in unless the requester asks for UTC.
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")
    # The administrators' attachment policy for schedule emails: None is "links only"; a number is
    # the largest attachment in MiB after base64 encoding (app/domain/schedules/attachment_rules.py).
    attachment_limit_mb: Mapped[int | None] = mapped_column()
    # The external id a customer's IAM role requires of Rhythm's principal before it lets it in
    # (an S3 destination by role): made once, when first shown, so a role set up keeps working.
    aws_external_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    memberships: Mapped[list[Membership]] = relationship(back_populates="workspace")


class Person(UserMixin, Model):
    """Someone who can log in: a workspace member, an administrator, or Rhythm staff."""

    __tablename__ = "people"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    password_hash: Mapped[str] = mapped_column(String(300))
    is_staff: Mapped[bool] = mapped_column(default=False)
    staff_permissions: Mapped[list[str]] = mapped_column(JSON, default=list)
    # What a session stores instead of the id; a new token ends every session made with the old one.
    session_token: Mapped[str] = mapped_column(String(64), unique=True, default=lambda: secrets.token_urlsafe(32))
    failed_logins: Mapped[int] = mapped_column(default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    memberships: Mapped[list[Membership]] = relationship(back_populates="person")

    def get_id(self) -> str:
        return self.session_token


class Membership(Model):
    """A person's place in a workspace: role, grants, dataset grants and optional team row scope."""

    __tablename__ = "memberships"
    __table_args__ = (
        UniqueConstraint("workspace_id", "person_id"),
        CheckConstraint("role IN ('member', 'admin')", name="role"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(20), default="member")
    grants: Mapped[list[str]] = mapped_column(JSON, default=list)
    dataset_grants: Mapped[list[str]] = mapped_column(JSON, default=list)
    # None: every team's rows; a list of team ids: only those teams' rows are visible.
    team_scope: Mapped[list[int] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    workspace: Mapped[Workspace] = relationship(back_populates="memberships")
    person: Mapped[Person] = relationship(back_populates="memberships")
