"""The product-wide datasets a workspace can export: real tables keyed by workspace.

What each column means to a reader lives in the catalog (app/domain/sources/catalog.py); these are
the physical tables the demo seed fills. Names and team are carried on each row the way the
platform's reporting views expose them, so an export needs no joins.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import ForeignKey, Index, Numeric, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class TeamAndPersonColumns:
    """The team and the person a row is about, each by id and by name."""

    team_id: Mapped[int] = mapped_column(ForeignKey("data_teams.id", ondelete="CASCADE"))
    team_name: Mapped[str] = mapped_column(String(200))
    person_id: Mapped[int] = mapped_column(ForeignKey("data_people.id", ondelete="CASCADE"))
    person_name: Mapped[str] = mapped_column(String(200))


class Team(Model):
    __tablename__ = "data_teams"

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    code: Mapped[str] = mapped_column(String(40))
    name: Mapped[str] = mapped_column(String(200))
    location: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class TeamMember(Model):
    """An employee as the people dataset shows them (not someone who logs in to the console)."""

    __tablename__ = "data_people"

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("data_teams.id", ondelete="CASCADE"))
    team_name: Mapped[str] = mapped_column(String(200))
    full_name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(254))
    job_title: Mapped[str] = mapped_column(String(200))
    hourly_rate: Mapped[Decimal] = mapped_column(Numeric(10, 2))
    started_on: Mapped[date]
    active: Mapped[bool]


class Shift(TeamAndPersonColumns, Model):
    __tablename__ = "data_shifts"

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(100))
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime)
    break_minutes: Mapped[int]
    notes: Mapped[str] = mapped_column(Text, default="")


class TimeOffRequest(TeamAndPersonColumns, Model):
    __tablename__ = "data_time_off_requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    status: Mapped[str] = mapped_column(String(40))
    starts_on: Mapped[date]
    ends_on: Mapped[date]
    days: Mapped[Decimal] = mapped_column(Numeric(5, 1))
    reason: Mapped[str] = mapped_column(Text, default="")
    submitted_at: Mapped[datetime] = mapped_column(UTCDateTime)


class TimesheetEntry(TeamAndPersonColumns, Model):
    """The largest dataset; SEED_ROWS scales it."""

    __tablename__ = "data_timesheet_entries"
    __table_args__ = (Index("ix_data_timesheet_entries_workspace_date", "workspace_id", "work_date"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    work_date: Mapped[date]
    hours: Mapped[Decimal] = mapped_column(Numeric(5, 2))
    project: Mapped[str] = mapped_column(String(200))
    approved: Mapped[bool]
    note: Mapped[str] = mapped_column(Text, default="")
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)
