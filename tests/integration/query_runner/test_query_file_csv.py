"""CSV export files on PostgreSQL: the COPY path, the Python path, and what a reader sees."""

from __future__ import annotations

import csv
import io
from collections import Counter
from contextlib import closing
from datetime import UTC, datetime

import pytest
from sqlalchemy import Text, literal_column, select, text

from app import create_app
from app.data.csv_copy import copy_record_batches, copy_statement
from app.data.query_runner import iter_rows, request_columns
from app.domain.errors import AccessDenied
from app.domain.files.formula_guard import CELL_BREAKS, LEADING_CHARACTERS
from app.domain.people.access import RequesterContext, current_context
from app.domain.sources.catalog import Column, get_dataset
from app.domain.sources.stored_request import FileRequest
from app.extensions import db
from app.rendering import csv_writer
from app.rendering.csv_writer import BOM, write_csv, write_csv_records
from app.rendering.neutralise import FORMULA_TRIGGERS, neutralise
from app.services.files.query_file_production import write_query_file
from tests import factories
from tests.fixtures.apps import connecting_with


def write_csv_copy(request, access, heading, out, progress, total, exact_values=False) -> int:
    """The PostgreSQL way: COPY formats the records, the writer relays them."""
    batches = copy_record_batches(request, access, exact_values=exact_values, rows_per_batch=csv_writer.ROWS_PER_CHUNK)
    with closing(batches):
        columns = request_columns(request)
        return write_csv_records(
            columns, batches, out, heading=heading, progress=progress, total=total, warnings=Counter()
        )


def write_csv_rows(request, access, heading, out, progress, total, exact_values=False) -> int:
    """The portable way: typed rows formatted by the writer."""
    with closing(iter_rows(request, access)) as rows:
        return write_csv(
            request_columns(request),
            rows,
            out,
            heading=heading,
            exact_values=exact_values,
            progress=progress,
            total=total,
            warnings=Counter(),
        )


def _request(dataset: str, columns: list[str] | None = None, **rest) -> FileRequest:
    chosen = columns or get_dataset(dataset).column_names
    return FileRequest.from_json({"dataset": dataset, "columns": chosen, "filters": [], "sort": [], **rest})


def _both_paths(
    request: dict, access: RequesterContext, heading: str = "labels", exact_values: bool = False
) -> tuple[bytes, bytes]:
    copied, formatted = io.BytesIO(), io.BytesIO()
    copy_rows = write_csv_copy(request, access, heading, copied, lambda n, t: None, None, exact_values)
    python_rows = write_csv_rows(request, access, heading, formatted, lambda n, t: None, None, exact_values)
    assert copy_rows == python_rows
    return copied.getvalue(), formatted.getvalue()


def _records(data: bytes) -> list[list[str]]:
    assert data.startswith(BOM)
    return list(csv.reader(io.StringIO(data[len(BOM) :].decode("utf-8"), newline="")))


@pytest.fixture
def every_dataset(world):
    """The world, plus shifts and time-off requests carrying the hostile values too."""
    for i, value in enumerate(factories.hostile_values()):
        employee = world.employees[i % len(world.employees)]
        factories.make_shift(employee, notes=value, role=value[:100], break_minutes=-i)
        factories.make_time_off(employee, reason=value, kind=value[:40])
    return current_context(world.workspace.id, world.admin.id)


@pytest.mark.parametrize("exact_values", [False, True], ids=["spreadsheet-safe", "exact"])
@pytest.mark.parametrize("dataset", ["timesheet_entries", "people", "shifts", "time_off_requests", "teams"])
def test_copy_path_and_python_path_write_identical_bytes(every_dataset, dataset, exact_values):
    """Every column of every dataset, hostile and non-Latin values included: the two paths agree byte for byte."""
    request = _request(dataset, sort=[{"column": "id", "direction": "desc"}])
    copied, formatted = _both_paths(request, every_dataset, exact_values=exact_values)
    assert copied == formatted
    assert len(_records(copied)) > 1


def test_copy_output_ignores_the_sessions_time_zone_and_date_style(world, app):
    """On connections defaulting to another time zone and DateStyle, COPY still writes UTC times and ISO dates."""
    moment = datetime(2026, 3, 1, 23, 45, 59, 900000, tzinfo=UTC)
    factories.make_timesheet_entry(world.employees[0], recorded_at=moment)
    request = _request("timesheet_entries", ["work_date", "recorded_at"], sort=[{"column": "id", "direction": "desc"}])
    access = current_context(world.workspace.id, world.admin.id)
    copied_here, formatted_here = _both_paths(request, access)
    elsewhere = create_app(connecting_with(app.config["SETTINGS"], "-c timezone=Asia/Kolkata -c datestyle=SQL,DMY"))
    with elsewhere.app_context():
        assert db.session.execute(text("SHOW timezone")).scalar_one() == "Asia/Kolkata"
        copied_elsewhere = io.BytesIO()
        write_csv_copy(request, access, "labels", copied_elsewhere, lambda n, t: None, None)
        db.session.remove()
        db.engine.dispose()
    assert copied_elsewhere.getvalue() == copied_here == formatted_here
    assert b"\r\n2026-11-02,2026-03-01T23:45:59Z\r\n" in copied_here


def test_paths_agree_on_empty_text_and_copys_end_marker_in_a_single_column(world):
    """One-column files: an empty text and a lone backslash-dot are quoted the same way by both paths."""
    for note in ("", "\\.", ""):
        factories.make_timesheet_entry(world.employees[0], note=note)
    access = current_context(world.workspace.id, world.admin.id)
    copied, formatted = _both_paths(_request("timesheet_entries", ["note"]), access, heading="none")
    assert copied == formatted
    assert b'\r\n""\r\n"\\."\r\n""\r\n' in copied


def test_paths_agree_on_empty_text_among_several_columns(world):
    """Several columns: an empty text is a quoted empty field, on both paths."""
    factories.make_timesheet_entry(world.employees[0], note="")
    access = current_context(world.workspace.id, world.admin.id)
    request = _request("timesheet_entries", ["note", "approved"], filters=[{"column": "note", "op": "is_empty"}])
    copied, formatted = _both_paths(request, access, heading="none")
    assert copied == formatted == BOM + b'"",true\r\n'


def test_every_text_field_is_quoted_and_numbers_are_not(world):
    """Text fields are always quoted (a `;` reader cannot split them); numbers, dates and booleans never are."""
    factories.make_timesheet_entry(world.employees[0], note="plain", hours=-42)
    access = current_context(world.workspace.id, world.admin.id)
    request = _request(
        "timesheet_entries",
        ["id", "note", "hours", "work_date", "approved"],
        filters=[{"column": "note", "op": "eq", "value": "plain"}],
    )
    copied, formatted = _both_paths(request, access, heading="none")
    assert copied == formatted
    assert copied.endswith(b',"plain",-42.00,2026-11-02,true\r\n')


def test_exact_values_keep_formula_like_text_as_stored(world):
    """ "For data tools": the CSV holds each hostile note exactly, with no added quote, on both paths."""
    access = current_context(world.workspace.id, world.admin.id)
    request = _request("timesheet_entries", ["note"], sort=[{"column": "id", "direction": "asc"}])
    copied, formatted = _both_paths(request, access, heading="none", exact_values=True)
    assert copied == formatted
    assert [record[0] for record in _records(copied)] == factories.hostile_values()


def test_filter_values_reach_copy_as_parameters(world):
    """In-lists, LIKE wildcards and quotes in filter values work on the COPY path as on the Python path."""
    factories.make_timesheet_entry(world.employees[0], note="it's 100% done_now")
    factories.make_timesheet_entry(world.employees[0], note="it's 1000 done-now")
    access = current_context(world.workspace.id, world.admin.id)
    request = _request(
        "timesheet_entries",
        ["note"],
        filters=[
            {"column": "note", "op": "contains", "value": "'S 100% DONE_"},
            {"column": "note", "op": "in", "value": ["it's 100% done_now", "=1+2"]},
        ],
    )
    copied, formatted = _both_paths(request, access, heading="none")
    assert copied == formatted == BOM + b'"it\'s 100% done_now"\r\n'


def test_every_hostile_text_is_neutralised_in_the_csv(world):
    """Each hostile note reads back as the stored value, quote-prefixed when it starts with a trigger."""
    access = current_context(world.workspace.id, world.admin.id)
    request = _request("timesheet_entries", ["note"], sort=[{"column": "id", "direction": "asc"}])
    out = io.BytesIO()
    write_csv_copy(request, access, "names", out, lambda n, t: None, None)
    cells = [record[0] for record in _records(out.getvalue())[1:]]
    assert cells == [neutralise(value) for value in factories.hostile_values()]
    assert not [cell for cell in cells if cell.lstrip(" \u00a0\u200b")[:1] in FORMULA_TRIGGERS]


def test_records_end_with_crlf_and_newlines_inside_values_are_kept(world):
    """RFC 4180: each record ends with CRLF; a newline inside a quoted value stays a bare LF."""
    access = current_context(world.workspace.id, world.admin.id)
    request = _request("timesheet_entries", ["note"])
    out = io.BytesIO()
    rows = write_csv_copy(request, access, "names", out, lambda n, t: None, None)
    data = out.getvalue()
    assert data.count(b"\r\n") == rows + 1
    assert b'"line one\nline two"\r\n' in data


@pytest.mark.parametrize(
    ("heading", "first_line"),
    [("names", "id,note,hours"), ("labels", "Entry ID,Note,Hours"), ("none", None)],
)
def test_heading_row_follows_the_heading_choice(world, heading, first_line):
    """Column names, labels, or no heading row, after the byte-order mark."""
    access = current_context(world.workspace.id, world.admin.id)
    out = io.BytesIO()
    write_csv_copy(_request("timesheet_entries", ["id", "note", "hours"]), access, heading, out, lambda n, t: None, 0)
    first = _records(out.getvalue())[0]
    assert first == (first_line.split(",") if first_line else ["1", "'=1+2", "7.50"])


def test_team_scope_applies_to_the_copy_path(world):
    """The COPY path runs the same scoped select: a team-A member's file holds team A only."""
    access = RequesterContext.of(world.scoped_membership)
    out = io.BytesIO()
    write_csv_copy(_request("timesheet_entries", ["team_name"]), access, "none", out, lambda n, t: None, None)
    assert {record[0] for record in _records(out.getvalue())} == {"Team A"}


@pytest.fixture
def thousands(world):
    """12,000 more timesheet entries whose notes carry quotes, commas and newlines."""
    db.session.execute(
        text(
            "INSERT INTO data_timesheet_entries (workspace_id, team_id, team_name, person_id, person_name,"
            " work_date, hours, project, approved, note, recorded_at)"
            " SELECT workspace_id, team_id, team_name, person_id, person_name, work_date, hours, project,"
            " approved, 'row ' || n || ', \"quoted\"' || E'\\n' || repeat('x', n % 200), recorded_at"
            " FROM data_timesheet_entries, generate_series(1, 12000) AS n WHERE id = 1"
        )
    )
    db.session.commit()
    return current_context(world.workspace.id, world.admin.id)


def test_copy_path_reports_progress_in_chunks_and_the_exact_count(thousands, monkeypatch):
    """Progress rises chunk by chunk, never past the total, and ends with the exact row count."""
    monkeypatch.setattr(csv_writer, "ROWS_PER_CHUNK", 1000)
    calls = []
    total = 12_000 + len(factories.hostile_values())
    out = io.BytesIO()
    rows = write_csv_copy(
        _request("timesheet_entries"), thousands, "names", out, lambda n, t: calls.append((n, t)), total
    )
    assert rows == total
    assert len(calls) > 12
    assert [n for n, _ in calls] == sorted(n for n, _ in calls)
    assert all(t == total and n <= total for n, t in calls)
    assert calls[-1] == (total, total)


def test_large_files_agree_across_chunks(thousands, monkeypatch):
    """With many small chunks, quoted values with newlines still come out the same on both paths."""
    monkeypatch.setattr(csv_writer, "ROWS_PER_CHUNK", 7)
    copied, formatted = _both_paths(_request("timesheet_entries"), thousands)
    assert copied == formatted
    assert len(_records(copied)) == 12_000 + len(factories.hostile_values()) + 1


def test_query_file_writes_csv_and_reports_the_counted_total(world):
    """write_query_file counts first, reports (0, total), and returns the rows it wrote."""
    query = factories.make_query(world.workspace, world.admin)
    export = factories.make_export(query, world.admin, format="csv", heading="labels")
    access = current_context(world.workspace.id, world.admin.id)
    calls = []
    out = io.BytesIO()
    rows = write_query_file(export, access, out, lambda n, t: calls.append((n, t)), Counter()).count
    total = len(factories.hostile_values())
    assert rows == total
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    records = _records(out.getvalue())
    assert records[0] == [get_dataset("timesheet_entries").column(c).label for c in query.columns]
    assert len(records) == total + 1


class _Stop(Exception):
    pass


def test_an_error_while_relaying_stops_the_copy_and_frees_its_connection(thousands, monkeypatch):
    """When progress raises mid-COPY (a superseded job), the error surfaces and the next file still works."""
    monkeypatch.setattr(csv_writer, "ROWS_PER_CHUNK", 1000)

    def stop_at_first_chunk(rows, total):
        raise _Stop

    for _ in range(db.engine.pool.size() + 1):
        with pytest.raises(_Stop):
            write_csv_copy(_request("timesheet_entries"), thousands, "names", io.BytesIO(), stop_at_first_chunk, None)
    out = io.BytesIO()
    rows = write_csv_copy(_request("timesheet_entries"), thousands, "names", out, lambda n, t: None, None)
    assert rows == 12_000 + len(factories.hostile_values())
    still_copying = text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND state = 'active' AND query LIKE 'COPY%'"
    )
    assert db.session.execute(still_copying).scalar_one() == 0


@pytest.mark.parametrize("write", [write_csv_copy, write_csv_rows])
def test_refused_access_writes_nothing(world, write):
    """A member without the dataset grant gets AccessDenied before any byte (not even the heading) is written."""
    access = RequesterContext.of(factories.make_member(world.workspace, dataset_grants=["teams"]))
    out = io.BytesIO()
    with pytest.raises(AccessDenied):
        write(_request("timesheet_entries"), access, "names", out, lambda n, t: None, None)
    assert out.getvalue() == b""


def _guard_cases() -> list[str]:
    """Texts at every branch of the guard: each leading character and trigger, behind plain starts and breaks."""
    openings = ["", "a", "1", "Ø", "大", "🙂", "'", "＝", *(f"x{brk}" for brk in CELL_BREAKS), "a\r\n"]
    leads = ["", *LEADING_CHARACTERS, "  ", ' "\u00a0']
    nexts = ["", "b", *FORMULA_TRIGGERS, *CELL_BREAKS]
    endings = ["", "=1", ";=1", "\n-2", "\t@b", "; x"]
    return [o + lead + n + e for o in openings for lead in leads for n in nexts for e in endings]


def test_the_copy_guard_agrees_with_python_on_every_leading_character_trigger_and_break(app_context):
    """The SQL guard's shortcuts (first character, trimmed start, no break) give what neutralise gives, text by text."""
    cases = _guard_cases()
    values = (
        select(literal_column("value", Text))
        .select_from(text("unnest(CAST(:values AS text[])) WITH ORDINALITY AS guard_cases(value, position)"))
        .order_by(literal_column("position"))
    )
    guarded = copy_statement(values, [Column("value", "Value", "text", "")], exact_values=False)
    rows = db.session.execute(guarded, {"values": cases}).all()
    assert [row[0] for row in rows] == [neutralise(case) for case in cases]


def test_the_copy_guard_keeps_a_windows_line_break_whole(app_context):
    """CR LF is one break in SQL too: no `'` lands between CR and LF, only before a real trigger."""
    values = select(literal_column("value", Text)).select_from(
        text("unnest(CAST(:values AS text[])) WITH ORDINALITY AS guard_cases(value, position)")
    )
    guarded = copy_statement(values.order_by(literal_column("position")), [Column("value", "Value", "text", "")], False)
    rows = db.session.execute(guarded, {"values": ["Arrived late\r\nLeft early", "a\r\n\r\n=1"]}).all()
    assert [row[0] for row in rows] == ["Arrived late\r\nLeft early", "a\r\n\r\n'=1"]
