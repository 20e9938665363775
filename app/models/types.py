"""Column types, lengths and constraint text shared by the models."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from sqlalchemy import ColumnElement, DateTime, Float, Index, String, and_, literal, or_, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import InstrumentedAttribute, Mapped, mapped_column
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import TypeDecorator

from app.extensions import db

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
    """This process's clock: for what only this process sees (a timeout, a pace, a form's
    default). A time written on a record of background work, or compared with one, comes from
    the database's clock instead (`database_now`, `database_clock`)."""
    return datetime.now(UTC)


class database_now(FunctionElement[datetime]):
    """SQL for the database server's current time, `seconds` later: the one clock every machine's
    workers, schedulers and web processes agree on, whatever their own clocks say.

    A lease is written as `database_now(lease_seconds)` and judged against `database_now()` inside
    the guarded statement, so a worker whose clock runs behind keeps a lease it renews and one
    whose clock runs ahead loses it on time. PostgreSQL's `statement_timestamp()` is the start of
    the statement (`now()` would be the start of a transaction that may have begun long before);
    SQLite, embedded in each process of one machine, reads that machine's clock.
    """

    type = UTCDateTime()
    inherit_cache = True
    name = "database_now"

    def __init__(self, seconds: float = 0) -> None:
        self.seconds = float(seconds)
        # A bound value, not part of the statement's text, so cached statements fit any offset.
        super().__init__(literal(self.seconds, Float()))


@compiles(database_now, "postgresql")
def _database_now_postgresql(element: database_now, compiler: SQLCompiler, **kw) -> str:
    seconds = compiler.process(element.clauses, **kw)
    return f"(statement_timestamp() + make_interval(secs => CAST({seconds} AS double precision)))"


@compiles(database_now, "sqlite")
def _database_now_sqlite(element: database_now, compiler: SQLCompiler, **kw) -> str:
    seconds = compiler.process(element.clauses, **kw)
    # SQLite gives milliseconds; three more digits keep the text in SQLAlchemy's stored form, so
    # comparing it with stored times as text orders them as times.
    return f"(strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', {seconds})) || '000')"


# A time a transition writes or compares: a value already read (from the database's clock, or a
# test's), or the database's clock itself, read inside the statement.
Moment = datetime | database_now


def database_time(now: Moment | None) -> Moment:
    """`now` when the caller has one, else the database's clock in the statement itself."""
    return now if now is not None else database_now()


def moment_after(moment: Moment, delta: timedelta) -> Moment:
    """`moment` plus `delta`, still on the database's clock when `moment` is."""
    if isinstance(moment, datetime):
        return moment + delta
    return database_now(moment.seconds + delta.total_seconds())


def database_clock() -> datetime:
    """The database server's current time, read now: what a process compares a record's times with
    (a lease, a retry's due time) or computes a later time from. One short round trip, on a
    connection of its own so the caller's transaction is untouched."""
    with db.engine.connect() as connection:
        return connection.execute(select(database_now())).scalar_one()


class LeaseColumns:
    """Columns of a row a job works on under a lease (app/services/work/leases.py).

    The attempt that starts the row records its holder (the RQ worker's name) and an expiry it
    keeps renewing while it lives; the watchdog redelivers a running row whose lease lapsed.
    """

    lease_holder: Mapped[str | None] = mapped_column(String(200))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


def lease_lapsed(
    lease_expires_at: InstrumentedAttribute[datetime | None], now: Moment | None = None
) -> ColumnElement[bool]:
    """The SQL condition "this row's lease lapsed by `now`" (by the database's clock when no `now`
    is given); a row without a lease has no live holder.

    Here, beside the columns, so guarded transitions in app/domain can name it too."""
    return or_(lease_expires_at.is_(None), lease_expires_at < database_time(now))


def lease_live(
    lease_expires_at: InstrumentedAttribute[datetime | None], now: Moment | None = None
) -> ColumnElement[bool]:
    """The negation of `lease_lapsed`: a holder renewed the lease recently enough to own the row."""
    return and_(lease_expires_at.is_not(None), lease_expires_at >= database_time(now))


def newest_first_indexes(table: str, at: str) -> tuple[Index, ...]:
    """The indexes a newest-first list of `table` by (`at`, id) needs to stay an index range scan
    when filtered by nothing, by status or by workspace (the staff console's lists)."""
    return (
        Index(f"ix_{table}_staff_time", at, "id"),
        Index(f"ix_{table}_staff_status", "status", at, "id"),
        Index(f"ix_{table}_staff_workspace", "workspace_id", at, "id"),
    )


def one_of(column: str, values: Iterable[StrEnum]) -> str:
    """The SQL text "`column` is one of these values" (an enum's, or a tuple of some of them), for
    CHECK constraints and partial index predicates."""
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"
