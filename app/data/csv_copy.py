"""CSV records straight from PostgreSQL: `COPY (select) TO STDOUT WITH (FORMAT csv)`.

The fast way to read a query file's rows on PostgreSQL (1M rows × 12 columns: COPY 1.3 s, a
named cursor feeding `csv.writer` 7.3 s). The database formats every cell exactly as
app/rendering/csv_writer.py does in Python (its docstring has the rule), so the CSV writer only
relays the records (`write_csv_records`), received in batches gathered by C calls
(app/data/copy_out.py: the job's CPU at 1,000,000 rows 1.25-1.81 s against 1.67-1.97 s a row at
a time; the database's COPY sets the time), and a test holds both ways byte-for-byte equal:

- text goes through the formula guard of app/domain/files/formula_guard.py (unless the file asks for
  exact values), from the same character sets and break pattern Python uses; FORCE_QUOTE quotes
  every non-NULL text, as the Python path does;
- a NULL is an empty field, unquoted (COPY quotes an empty string but not a NULL); in a row of
  one column NULL becomes '' so that COPY quotes it, as the Python path writes `""` there;
- integers, decimals (numeric keeps its scale and never uses an exponent) and dates
  (YYYY-MM-DD under DateStyle ISO) use the type's own output; times are `to_char` in UTC and
  booleans `true`/`false`.

DateStyle and the time zone are set for the COPY's transaction, so the session's defaults
never show in the file; parallel workers are off for it (see `_stream_copy`).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from sqlalchemy import ColumnElement, Select, Text, and_, case, cast, func, literal

from app.data.copy_out import copy_batches
from app.data.query_runner import build_select, request_columns
from app.domain.files.formula_guard import CELL_BREAKS, FORMULA_TRIGGERS, GUARDED_BREAK_PATTERN, LEADING_CHARACTERS
from app.domain.people.access import RequesterContext
from app.domain.sources.catalog import Column
from app.domain.sources.stored_request import FileRequest
from app.extensions import db

# Code points (PostgreSQL's `ascii` of a text's first character, in a UTF-8 database).
_TRIGGER_CODES = sorted({ord(character) for character in FORMULA_TRIGGERS})
# The triggers a text holding no cell break can start with (tab, CR and LF are breaks).
_TRIGGER_CODES_BUT_BREAKS = sorted({ord(character) for character in FORMULA_TRIGGERS if character not in CELL_BREAKS})
_LEADING_OR_TRIGGER_CODES = sorted({ord(character) for character in LEADING_CHARACTERS + "".join(FORMULA_TRIGGERS)})


def _guarded_text(expr: ColumnElement) -> ColumnElement:
    """SQL twin of app.rendering.neutralise.neutralise, shaped for speed (measured on 1M rows).

    Regular expressions cost 120-180 ns a text here, so the common path has none: four
    `strpos` tell whether the text holds a cell break (`;`, tab, CR, LF). Without one, only the
    start can need a `'`, and the first character's code point (`ascii`) settles most texts;
    a text that starts with a blank or `"` has them trimmed (`ltrim`) to find the character
    behind. Only a text holding a break goes through `regexp_replace`.
    """
    quote = literal("'", Text)
    first = func.ascii(expr)
    first_after_leading = func.ascii(func.ltrim(expr, literal(LEADING_CHARACTERS, Text)))
    without_breaks = case(
        (first.not_in(_LEADING_OR_TRIGGER_CODES), expr),
        (first.in_(_TRIGGER_CODES_BUT_BREAKS), quote + expr),
        (first_after_leading.in_(_TRIGGER_CODES_BUT_BREAKS), quote + expr),
        else_=expr,
    )
    start = case((first_after_leading.in_(_TRIGGER_CODES), quote), else_=literal("", Text))
    with_breaks = start + func.regexp_replace(expr, literal(GUARDED_BREAK_PATTERN, Text), literal("\\1'", Text), "g")
    holds_no_break = and_(*(func.strpos(expr, literal(character, Text)) == 0 for character in CELL_BREAKS))
    return case((holds_no_break, without_breaks), else_=with_breaks)


def _sql_cell(expr: ColumnElement, column: Column, single_column: bool, exact_values: bool) -> ColumnElement:
    """The CSV text of one cell, NULL where the field is empty and unquoted."""
    if column.type == "text":
        text = expr if exact_values else _guarded_text(expr)
    elif column.type == "datetime":
        # In the transaction's time zone, which the COPY sets to UTC.
        text = func.to_char(expr, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
    elif column.type == "boolean":
        text = case((expr.is_(True), "true"), (expr.is_(False), "false"))
    elif column.type in ("integer", "decimal", "date"):
        text = expr
    else:
        raise ValueError(f"unknown column type {column.type!r}")
    return func.coalesce(cast(text, Text), "") if single_column else text


def copy_statement(statement: Select, columns: Sequence[Column], exact_values: bool) -> Select:
    """The same select with every column rendered as the CSV text of its cell."""
    single_column = len(columns) == 1
    cells = [
        _sql_cell(expr, column, single_column, exact_values).label(column.name)
        for expr, column in zip(statement.selected_columns, columns, strict=True)
    ]
    return statement.with_only_columns(*cells, maintain_column_froms=True)


def copy_record_batches(
    request: FileRequest, access: RequesterContext, *, exact_values: bool, rows_per_batch: int
) -> Generator[list[memoryview], None, None]:
    """The request's rows as CSV records, each one row ending with `\\n`, as COPY sends them, in
    lists of `rows_per_batch` gathered by C calls (app/data/copy_out.py; the last may be shorter).

    Access and validation errors are raised here, at the call, before any record. Each record
    stays valid as long as it is held. Close the iterator (or exhaust it) to end the COPY and give
    its connection back.
    """
    columns = request_columns(request)
    statement = copy_statement(build_select(request, access), columns, exact_values)
    dialect = db.engine.dialect
    compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    text_columns = [dialect.identifier_preparer.quote(c.name) for c in columns if c.type == "text"]
    force_quote = f", FORCE_QUOTE ({', '.join(text_columns)})" if text_columns else ""
    # COPY takes no server-side parameters: psycopg binds them client-side as quoted literals.
    sql = f"COPY ({compiled.string}) TO STDOUT WITH (FORMAT csv{force_quote})"
    return _stream_copy(sql, compiled.params, rows_per_batch)


def _stream_copy(sql: str, params: dict, rows_per_batch: int) -> Generator[list[memoryview], None, None]:
    raw = db.engine.raw_connection()
    try:
        if raw.driver_connection is None:
            raise RuntimeError("the pool lent a connection whose database connection is closed")
        with raw.driver_connection.cursor() as cursor:
            # Dates print as YYYY-MM-DD and times are formatted in UTC, whatever the server's defaults.
            cursor.execute("SET LOCAL datestyle = 'ISO, YMD'")
            cursor.execute("SET LOCAL timezone = 'UTC'")
            # The guard's function calls make the planner price a big COPY for parallel workers;
            # measured on 1M rows they cost more CPU and no time, and one file should not take
            # them from the database that serves the pages.
            cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
            yield from copy_batches(cursor, sql, params, rows_per_batch)
        raw.rollback()
    finally:
        raw.close()
