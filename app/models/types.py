"""Column types, lengths and constraint text shared by the models."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import ColumnElement, DateTime, Index, String, or_
from sqlalchemy.orm import InstrumentedAttribute, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

# The longest sentence stored about a failure a person reads: a destination's connection test,
# a package delivery's failure, a notice's sending error.
SUMMARY_LIMIT = 500
# The longest failure detail stored on a file, run, attempt or execution, or an execution's event message.
DETAIL_LIMIT = 1000


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC in Python, on PostgreSQL and SQLite alike.

    SQLite keeps no offset, so values come back naive; this restores UTC on the way out and
    refuses naive values on the way in, so no code compares naive with aware times.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


class LeaseColumns:
    """Columns of a row a job works on under a lease (app/services/platform/leases.py).

    The attempt that starts the row records its holder (the RQ worker's name) and an expiry it
    keeps renewing while it lives; the watchdog redelivers a running row whose lease lapsed.
    """

    lease_holder: Mapped[str | None] = mapped_column(String(200))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


def lease_lapsed(lease_expires_at: InstrumentedAttribute[datetime | None], now: datetime) -> ColumnElement[bool]:
    """The SQL condition "this row's lease lapsed by `now`"; a row without a lease has no live holder.

    Here, beside the columns, so guarded transitions in app/domain can name it too."""
    return or_(lease_expires_at.is_(None), lease_expires_at < now)


def newest_first_indexes(table: str, at: str) -> tuple[Index, ...]:
    """The indexes a newest-first list of `table` by (`at`, id) needs to stay an index range scan
    when filtered by nothing, by status or by workspace (the staff console's lists)."""
    return (
        Index(f"ix_{table}_staff_time", at, "id"),
        Index(f"ix_{table}_staff_status", "status", at, "id"),
        Index(f"ix_{table}_staff_workspace", "workspace_id", at, "id"),
    )


def one_of(column: str, values: type[StrEnum]) -> str:
    """The CHECK constraint text "`column` is one of the enum's values"."""
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"
