"""Report Excel files read back with openpyxl equal the database: table rows, coded groups and totals."""

from __future__ import annotations

import io
from datetime import datetime
from decimal import Decimal

from openpyxl import load_workbook
from sqlalchemy import func, select

from app.extensions import db
from app.models import TimesheetEntry
from app.rendering.xlsx_cells import ooxml_text
from app.services.files.export_runner import run_export_file
from tests.fixtures.workers import file_row


def _sheet(kit, report, storage):
    export = kit.request(report, "xlsx")
    assert run_export_file(export.id) == "succeeded", file_row(export.id).failure_detail
    produced = file_row(export.id)
    data = b"".join(storage.read_chunks(produced.storage_key))
    return load_workbook(io.BytesIO(data)).active, produced


def _rows_after_headings(sheet, headings: list[str]) -> list[tuple]:
    rows = list(sheet.iter_rows())
    start = next(i for i, row in enumerate(rows) if [c.value for c in row[: len(headings)]] == headings)
    return rows[start + 1 :]


def _entries(workspace_id: int, *order) -> list[TimesheetEntry]:
    return list(
        db.session.execute(
            select(TimesheetEntry).where(TimesheetEntry.workspace_id == workspace_id).order_by(*order)
        ).scalars()
    )


def _number(value) -> Decimal:
    return Decimal(str(value))


HEADINGS = ["Entry ID", "Employee", "Date", "Hours", "Note"]


def test_table_xlsx_holds_the_database_rows_under_headings(kit, isolated_storage):
    """Every row, typed: ids and hours as numbers, dates as dates, text exact; the title block first."""
    kit.add_rows(60)
    sheet, produced = _sheet(kit, kit.report(kind="table"), isolated_storage)
    assert sheet["A1"].value == "Hours worked — Северный корпус"
    rows = _rows_after_headings(sheet, HEADINGS)
    entries = _entries(kit.world.workspace.id, TimesheetEntry.id)
    assert len(rows) == len(entries) == produced.row_count
    for cells, entry in zip(rows, entries, strict=True):
        identifier, name, day, hours, note = (cell.value for cell in cells)
        assert identifier == entry.id
        assert name == ooxml_text(entry.person_name)
        assert isinstance(day, datetime) and day.date() == entry.work_date
        assert _number(hours) == entry.hours
        assert note == ooxml_text(entry.note)


def test_xlsx_cells_are_values_with_number_formats_never_formulas(kit, isolated_storage):
    """No cell is a formula, formula-looking text is exact and quote-prefixed, numbers and dates carry formats."""
    sheet, _ = _sheet(kit, kit.report(kind="coded"), isolated_storage)
    cells = [cell for row in sheet.iter_rows() for cell in row if cell.value is not None]
    assert all(cell.data_type != "f" for cell in cells)
    texts = [cell for cell in cells if isinstance(cell.value, str)]
    notes = {cell.value for cell in texts}
    assert "=1+2" in notes and "@SUM(A1:A2)" in notes and "-2+3" in notes
    assert all(cell.data_type == "s" and cell.quotePrefix for cell in texts)
    rows = _rows_after_headings(sheet, HEADINGS)
    data = [row for row in rows if isinstance(row[0].value, int)]
    assert data and all(row[2].number_format == "dd/mm/yyyy" for row in data)
    assert all(row[3].number_format == "#,##0.00" for row in data)


def test_coded_xlsx_has_group_headings_subtotals_and_a_grand_total_equal_to_sql(kit, isolated_storage):
    """Groups in code order, each heading with its description and count, its rows, then SUM(hours) as in SQL."""
    kit.add_rows(90)
    sheet, _ = _sheet(kit, kit.report(kind="coded"), isolated_storage)
    rows = [[cell.value for cell in row] for row in _rows_after_headings(sheet, HEADINGS)]
    workspace_id = kit.world.workspace.id
    expected = db.session.execute(
        select(TimesheetEntry.team_name, func.count(), func.sum(TimesheetEntry.hours))
        .where(TimesheetEntry.workspace_id == workspace_id)
        .group_by(TimesheetEntry.team_name)
        .order_by(TimesheetEntry.team_name)
    ).all()
    position = 0
    for team, count, hours in expected:
        description = {"Team A": "Day ward", "Team B": "Night ward"}[team]
        assert rows[position][0] == f"{team} — {description} · {count:,} rows"
        group = rows[position + 1 : position + 1 + count]
        entries = [e for e in _entries(workspace_id, TimesheetEntry.id) if e.team_name == team]
        assert [row[0] for row in group] == [e.id for e in entries]
        subtotal = rows[position + 1 + count]
        assert subtotal[0] == f"Subtotal {team} · {count:,} rows"
        assert _number(subtotal[3]) == hours
        assert subtotal[1] is None and subtotal[2] is None and subtotal[4] is None
        position += count + 2
    grand = rows[position]
    assert grand[0] == f"Grand total · {sum(c for _, c, _ in expected):,} rows"
    assert _number(grand[3]) == sum(h for _, _, h in expected)
    assert rows[position + 1 :] == []
