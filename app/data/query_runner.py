"""Running a stored export request (or a saved-query preview) against its catalog table.

Every statement is built by `build_select`, which checks the requester's dataset grant and
scopes the rows by workspace and team before anything else. Rows stream from a server-side
cursor on a connection of their own, so a job can commit progress on `db.session` while they
flow and memory stays flat however many rows there are.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation

from flask import current_app
from sqlalchemy import ColumnElement, Connection, Select, String, and_, false, func, literal, or_, select, true

from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.access import RequesterContext
from app.domain.sources.catalog import Column, Dataset, get_dataset
from app.domain.sources.query_spec import OPERATORS, substitute, validate_definition
from app.domain.sources.stored_request import FileRequest, FilterValue
from app.extensions import db
from app.models.types import utcnow


@dataclass(frozen=True)
class PreviewRows:
    """The first rows of a saved query as typed values, with the columns they hold, and how
    many rows match in all (`total`) and of those a file would hold (`file_rows`, the row limit's)."""

    columns: list[Column]
    rows: list[tuple]
    total: int
    file_rows: int


def request_dataset(request: FileRequest) -> Dataset:
    dataset = get_dataset(request.dataset)
    if dataset is None:
        raise ValidationError(f"Unknown dataset “{request.dataset}”.", "dataset")
    return dataset


def _column(dataset: Dataset, name: str, field: str) -> Column:
    column = dataset.column(name)
    if column is None:
        raise ValidationError(f"Unknown column “{name}” in {dataset.label}.", field)
    return column


def request_columns(request: FileRequest) -> list[Column]:
    """The catalog columns the request selects, in the order it selects them."""
    dataset = request_dataset(request)
    return [_column(dataset, name, "columns") for name in request.columns]


def _typed_value(column: Column, raw: object) -> object:
    """A normal-form filter value (as validate_definition stores it) in its column's Python type."""
    try:
        if column.type == "integer":
            return int(str(raw))
        if column.type == "decimal":
            return Decimal(str(raw))
        if column.type == "date":
            return date.fromisoformat(str(raw))
        if column.type == "datetime":
            moment = datetime.fromisoformat(str(raw))
            # Stored requests keep naive ISO times that mean UTC.
            return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        if column.type == "text":
            return str(raw)
    except (TypeError, ValueError, InvalidOperation):
        pass
    raise ValidationError(f"“{str(raw)[:40]}” is not a valid value for “{column.label}”.", "filters")


# The escape character of LIKE patterns: not the backslash, which PostgreSQL treats specially
# in some settings, so a backslash in the value is matched literally on both engines.
_LIKE_ESCAPE = "/"


def like_pattern(value: str, prefix: bool) -> str:
    """A LIKE pattern finding `value` as typed: its own %, _ and / match themselves."""
    escaped = value.replace(_LIKE_ESCAPE, _LIKE_ESCAPE * 2).replace("%", _LIKE_ESCAPE + "%")
    escaped = escaped.replace("_", _LIKE_ESCAPE + "_")
    return f"{escaped}%" if prefix else f"%{escaped}%"


def _folded(expr: ColumnElement) -> ColumnElement:
    # lower() on both sides, the same SQL on both engines. SQLite's own lower() knows only
    # ASCII; app.extensions replaces it on every SQLite connection with PostgreSQL's per-letter
    # mapping, so "École" and "ÉCOLE" compare alike there too.
    return func.lower(expr)


def filter_condition(expr: ColumnElement, column: Column, op: str, raw: FilterValue) -> ColumnElement[bool]:
    """The WHERE condition of one stored filter on `expr`, the catalog column `column`."""
    if op not in OPERATORS[column.type]:
        raise ValidationError(f"“{op}” cannot be used on “{column.label}”.", "filters")
    if op == "is_empty":
        return or_(expr.is_(None), expr == "")
    if op == "not_empty":
        return and_(expr.is_not(None), expr != "")
    if op == "is_true":
        return expr.is_(true())
    if op == "is_false":
        return expr.is_(false())
    if op == "between":
        if not isinstance(raw, list | tuple) or len(raw) != 2:
            raise ValidationError(f"“between” on “{column.label}” needs two values.", "filters")
        return expr.between(_typed_value(column, raw[0]), _typed_value(column, raw[1]))
    if op == "in":
        if not isinstance(raw, list | tuple) or not raw:
            raise ValidationError(f"“is one of” on “{column.label}” needs a list of values.", "filters")
        return expr.in_([_typed_value(column, item) for item in raw])
    value = _typed_value(column, raw)
    if op == "ieq":
        return _folded(expr) == _folded(literal(value, String()))
    if op in ("contains", "starts_with"):
        # Case-insensitive, with the value's own %, _ and backslash matched literally.
        pattern = literal(like_pattern(str(value), prefix=op == "starts_with"), String())
        return _folded(expr).like(_folded(pattern), escape=_LIKE_ESCAPE)
    comparisons = {
        "eq": lambda: expr == value,
        # "is not" keeps rows without a value: they are not the value asked about.
        "ne": lambda: expr.is_distinct_from(value),
        "lt": lambda: expr < value,
        "le": lambda: expr <= value,
        "gt": lambda: expr > value,
        "ge": lambda: expr >= value,
    }
    return comparisons[op]()


def _refuse_unreadable(dataset: Dataset, access: RequesterContext) -> None:
    if not access.can_read_dataset(dataset.name):
        raise AccessDenied(f"You do not have access to the {dataset.label} dataset.")


def _readable(statement: Select, dataset: Dataset, access: RequesterContext) -> Select:
    """`statement` limited to the dataset rows the requester may read: their workspace's, and
    only their teams' when their membership is scoped; AccessDenied without a grant."""
    _refuse_unreadable(dataset, access)
    table = dataset.table
    statement = statement.where(table.c.workspace_id == access.workspace_id)
    scope = access.row_scope
    if scope is not None:
        team_column = table.c[dataset.team_column]
        statement = statement.where(team_column.in_(sorted(scope)) if scope else false())
    return statement


def build_select(request: FileRequest, access: RequesterContext) -> Select:
    """The request's rows the requester may read: workspace and team scoped, filtered, ordered.

    The table's primary key ends the ORDER BY so equal sort values come out in the same order
    every time: an export run twice gives the same file.
    """
    dataset = request_dataset(request)
    _refuse_unreadable(dataset, access)
    columns = request_columns(request)
    if not columns:
        raise ValidationError("Choose at least one column.", "columns")
    table = dataset.table
    statement = _readable(select(*[table.c[column.name] for column in columns]), dataset, access)

    for condition in request.filters:
        column = _column(dataset, condition.column, "filters")
        statement = statement.where(filter_condition(table.c[column.name], column, condition.op, condition.value))

    sorted_names = []
    for key in request.sort:
        column = _column(dataset, key.column, "sort")
        expr = table.c[column.name]
        statement = statement.order_by(expr.desc() if key.descending else expr.asc())
        sorted_names.append(column.name)
    statement = statement.order_by(*[key for key in table.primary_key.columns if key.name not in sorted_names])

    if request.row_limit is not None:
        statement = statement.limit(request.row_limit)
    return statement


def count_rows(request: FileRequest, access: RequesterContext) -> int:
    """How many rows the request gives (at most its row limit)."""
    selected = build_select(request, access).order_by(None).subquery()
    return db.session.execute(select(func.count()).select_from(selected)).scalar_one()


def distinct_values(dataset: Dataset, column_name: str, access: RequesterContext, limit: int) -> list[str] | None:
    """The texts a column holds in the rows the requester may read, in order, when there are
    at most `limit` of them; None when there are more, or the column is not a text column.

    Read with the runner's own access rules: another team's values are not offered to a
    member whose rows are scoped to their teams.
    """
    column = dataset.column(column_name)
    if column is None or column.type != "text":
        return None
    expr = dataset.table.c[column.name]
    statement = _readable(select(expr).distinct(), dataset, access).where(expr.is_not(None), expr != "")
    values = list(db.session.execute(statement.order_by(expr).limit(limit + 1)).scalars())
    return values if len(values) <= limit else None


def _read_times_in_utc(connection: Connection) -> None:
    """Time stamps reach Python in UTC whatever the session's time zone.

    psycopg turns a timestamptz into a datetime in the session's zone, so 9999-12-31 23:59 UTC
    read in a zone east of UTC would be past year 9999 and fail ("timestamp too large").
    """
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql("SET LOCAL timezone = 'UTC'")


def stream_rows(statement: Select, batch_size: int) -> Generator[tuple, None, None]:
    """The statement's rows as tuples, fetched `batch_size` at a time from a server-side cursor."""
    # Its own connection: the caller commits progress on db.session while rows flow, and a
    # commit there would close a server-side cursor opened on the session's connection.
    with db.engine.connect() as connection:
        _read_times_in_utc(connection)
        result = connection.execution_options(stream_results=True, yield_per=batch_size).execute(statement)
        for batch in result.partitions():
            yield from map(tuple, batch)


def iter_rows(request: FileRequest, access: RequesterContext, batch_size: int = 5000) -> Generator[tuple, None, None]:
    """The request's rows as tuples of typed Python values, fetched `batch_size` at a time.

    Access and validation errors are raised here, at the call; the rows come as the iterator is
    consumed. Close the iterator (or exhaust it) to give its connection back.
    """
    return stream_rows(build_select(request, access), batch_size)


def preview_rows(definition: dict, access: RequesterContext, limit: int = 50) -> PreviewRows:
    """The first `limit` rows of a saved-query definition, substituted for today (UTC), and
    how many rows it gives in all, read with the same access."""
    settings = current_app.config["SETTINGS"]
    request = substitute(validate_definition(definition, settings.max_export_rows), utcnow().date())
    total = count_rows(replace(request, row_limit=None), access)
    file_rows = total if request.row_limit is None else min(total, request.row_limit)
    statement = build_select(replace(request, row_limit=min(request.row_limit or limit, limit)), access)
    with db.engine.connect() as connection:
        _read_times_in_utc(connection)
        rows = [tuple(row) for row in connection.execute(statement)]
    return PreviewRows(columns=request_columns(request), rows=rows, total=total, file_rows=file_rows)
