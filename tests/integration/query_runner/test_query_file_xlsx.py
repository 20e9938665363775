"""XLSX export files from PostgreSQL, read back with openpyxl and compared with the database."""

from __future__ import annotations

import io
from collections import Counter
from datetime import UTC, date, datetime

import pytest
from openpyxl import load_workbook
from sqlalchemy import select

from app.domain.people.access import current_context
from app.domain.sources.catalog import get_dataset
from app.extensions import db
from app.models import TimesheetEntry
from app.rendering import TooManyRows, xlsx_writer
from app.rendering.xlsx_cells import ooxml_text
from app.services.files.query_file_production import write_query_file
from tests import factories

DATASET = get_dataset("timesheet_entries")
ALL_COLUMNS = DATASET.column_names


def _export(world, **options):
    query = factories.make_query(
        world.workspace, world.admin, columns=ALL_COLUMNS, sort=[{"column": "id", "direction": "asc"}]
    )
    return factories.make_export(query, world.admin, **{"format": "xlsx", **options})


def _workbook_rows(world, **options) -> list[tuple]:
    access = current_context(world.workspace.id, world.admin.id)
    out = io.BytesIO()
    write_query_file(_export(world, **options), access, out, lambda n, t: None, Counter())
    return list(load_workbook(io.BytesIO(out.getvalue())).active.iter_rows())


def _expected(value, column_type):
    """What openpyxl reads back for a database value of the given catalog type."""
    if column_type == "text":
        return ooxml_text(value)
    if column_type == "decimal":
        return float(value)
    if column_type == "date":
        return datetime.combine(value, datetime.min.time())
    if column_type == "datetime":
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def test_every_cell_equals_the_database_value(world):
    """Each cell of each row is the stored value: text exact (OOXML-escaped), numbers, dates and booleans typed."""
    rows = _workbook_rows(world)[1:]
    entries = (
        db.session.execute(
            select(TimesheetEntry).where(TimesheetEntry.workspace_id == world.workspace.id).order_by(TimesheetEntry.id)
        )
        .scalars()
        .all()
    )
    assert len(rows) == len(entries) == len(factories.hostile_values())
    for cells, entry in zip(rows, entries, strict=True):
        expected = [_expected(getattr(entry, c.name), c.type) for c in DATASET.columns]
        assert [cell.value for cell in cells] == expected


def test_every_text_cell_is_a_quote_prefixed_string(world):
    """Text cells have data_type "s" and the quote-prefix style, so no spreadsheet evaluates them."""
    rows = _workbook_rows(world)[1:]
    for cells in rows:
        for cell, column in zip(cells, DATASET.columns, strict=True):
            if column.type == "text" and cell.value is not None:
                assert cell.data_type == "s" and cell.quotePrefix
    notes = [cells[ALL_COLUMNS.index("note")].value for cells in rows]
    assert notes == [ooxml_text(v) for v in factories.hostile_values()]


def test_numbers_stay_numeric(world):
    """Ids and hours are numbers, hours shown with two decimals; dates are dates; approved is a boolean."""
    first = _workbook_rows(world)[1]
    by_name = dict(zip(ALL_COLUMNS, first, strict=True))
    assert by_name["id"].data_type == "n" and isinstance(by_name["id"].value, int)
    assert (by_name["hours"].data_type, by_name["hours"].value, by_name["hours"].number_format) == ("n", 7.5, "0.00")
    assert by_name["work_date"].value.date() == date(2026, 11, 2)
    assert by_name["work_date"].number_format == "yyyy-mm-dd"
    assert by_name["recorded_at"].value == datetime(2026, 11, 2, 18, 0)
    assert by_name["approved"].data_type == "b"


def test_labels_heading_with_descriptions_row(world):
    """Heading labels in row 1, catalog descriptions in row 2, data from row 3."""
    rows = _workbook_rows(world, heading="labels", include_descriptions=True)
    assert [c.value for c in rows[0]] == [
        f"{c.label} (UTC)" if c.type == "datetime" else c.label for c in DATASET.columns
    ]
    assert [c.value for c in rows[1]] == [c.description for c in DATASET.columns]
    assert rows[2][0].value == 1
    assert len(rows) == 2 + len(factories.hostile_values())


def test_no_heading_starts_with_data(world):
    """heading "none": the first row is the first data row."""
    rows = _workbook_rows(world, heading="none")
    assert rows[0][0].value == 1
    assert len(rows) == len(factories.hostile_values())


def test_scoped_member_gets_only_their_teams_rows(world):
    """The XLSX file is produced with the requester's team scope."""
    query = factories.make_query(world.workspace, world.scoped, columns=["team_name"])
    export = factories.make_export(query, world.scoped, format="xlsx", heading="none")
    out = io.BytesIO()
    write_query_file(export, current_context(world.workspace.id, world.scoped.id), out, lambda n, t: None, Counter())
    values = {row[0].value for row in load_workbook(io.BytesIO(out.getvalue())).active.iter_rows()}
    assert values == {"Team A"}


def test_too_many_rows_for_a_sheet_is_refused_before_writing(world, monkeypatch):
    """When the counted total passes the sheet's capacity, TooManyRows is raised and nothing written."""
    monkeypatch.setattr(xlsx_writer, "MAX_SHEET_ROWS", 10)
    out = io.BytesIO()
    with pytest.raises(TooManyRows):
        write_query_file(
            _export(world), current_context(world.workspace.id, world.admin.id), out, lambda n, t: None, Counter()
        )
    assert out.getvalue() == b""


def test_progress_starts_with_the_total_and_ends_with_the_rows(world):
    """progress gets (0, total) first and (rows, total) last."""
    calls = []
    out = io.BytesIO()
    access = current_context(world.workspace.id, world.admin.id)
    rows = write_query_file(_export(world), access, out, lambda n, t: calls.append((n, t)), Counter()).count
    assert calls[0] == (0, rows) and calls[-1] == (rows, rows)


def test_the_rows_digest_follows_the_rows_not_the_file_or_the_zone_it_shows_times_in(world):
    """The digest a schedule compares is the rows', so the same rows give it again, whatever moment
    the file was made and whatever zone it shows time stamps in, and one changed value changes it."""
    access = current_context(world.workspace.id, world.admin.id)

    def digest(**options) -> str:
        written = write_query_file(_export(world, **options), access, io.BytesIO(), lambda n, t: None, Counter())
        assert written.count == len(factories.hostile_values())
        return written.digest

    first = digest()
    assert digest(time_zone="Europe/Berlin") == first
    entry = db.session.scalars(select(TimesheetEntry).order_by(TimesheetEntry.id)).first()
    entry.hours = entry.hours + 1
    db.session.commit()
    assert digest() != first
