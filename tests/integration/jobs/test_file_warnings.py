"""Warnings a file carries: counted by the writers, stored on the file by the runner, shown on its page."""

from __future__ import annotations

import io
from collections import Counter
from datetime import UTC, date, datetime

import pytest
from openpyxl import load_workbook
from sqlalchemy import text

from app import create_app
from app.domain.files import export_file
from app.domain.files.file_warnings import WARNING_CODES, describe, messages
from app.domain.people.access import current_context
from app.extensions import db
from app.services.files.export_runner import run_export_file
from app.services.files.query_file_production import write_query_file
from tests import factories
from tests.fixtures.apps import connecting_with
from tests.fixtures.workers import file_row

COLUMNS = ["id", "note", "work_date", "recorded_at"]


def _xlsx_export(world, **options):
    query = factories.make_query(
        world.workspace, world.admin, columns=COLUMNS, sort=[{"column": "id", "direction": "asc"}]
    )
    return factories.make_export(query, world.admin, format="xlsx", **options)


def test_cut_cells_and_dates_excel_cannot_hold_are_stored_on_the_file(world, isolated_storage):
    """An XLSX with one over-long note and two pre-1900 values succeeds and records their counts."""
    employee = world.employees[0]
    factories.make_timesheet_entry(employee, note="x" * 40_000)
    factories.make_timesheet_entry(employee, work_date=date(1899, 12, 31))
    factories.make_timesheet_entry(employee, recorded_at=datetime(1850, 1, 1, tzinfo=UTC))
    export = _xlsx_export(world)
    assert run_export_file(export.id) == "succeeded"
    assert file_row(export.id).warnings == {"cell_truncated": 1, "date_out_of_range": 2}


def test_time_stamps_in_the_repeated_hour_of_a_london_file_are_stored_as_warnings(world, isolated_storage):
    """00:30 and 01:30 UTC on 2024-10-27 both read 01:30 in London: the file counts two repeated local times."""
    for hour in (0, 1):
        factories.make_timesheet_entry(world.employees[0], recorded_at=datetime(2024, 10, 27, hour, 30, tzinfo=UTC))
    export = _xlsx_export(world, time_zone="Europe/London")
    assert run_export_file(export.id) == "succeeded"
    assert file_row(export.id).warnings == {"repeated_local_time": 2}


def test_a_file_without_limits_met_stores_no_warnings(world, isolated_storage):
    """A CSV of the same rows changes nothing, so its warnings stay empty (NULL)."""
    factories.make_timesheet_entry(world.employees[0], note="x" * 40_000)
    query = factories.make_query(world.workspace, world.admin, columns=COLUMNS)
    export = factories.make_export(query, world.admin, format="csv")
    assert run_export_file(export.id) == "succeeded"
    assert file_row(export.id).warnings is None
    assert db.session.execute(
        text("SELECT warnings IS NULL FROM query_exports WHERE id = :id"), {"id": export.id}
    ).scalar_one()


def test_the_file_page_shows_one_message_per_warning_code(client, auth, world):
    """Each code is shown as its own readable sentence with its count."""
    export = _xlsx_export(world)
    counts = {
        "cell_truncated": 3,
        "date_out_of_range": 1,
        "repeated_local_time": 2,
        "glyph_missing": 12,
        "cell_clipped": 2,
    }
    attempt = export_file.start(export.id)
    export_file.succeed(export.id, attempt, size_bytes=10, row_count=1, retention_days=30, warnings=Counter(counts))
    auth.login(world.admin.email)
    page = client.get(f"/w/{world.workspace.id}/files/{export.id}").get_data(as_text=True)
    assert 'id="file-warnings"' in page
    for code, count in counts.items():
        assert describe(code, count).replace("'", "&#39;") in page
    assert "3 cells were longer than Excel&#39;s 32,767-character limit and cut; each ends with “[…truncated]”." in page


def test_the_file_page_has_no_warnings_section_for_a_clean_file(client, auth, world):
    """No warnings, no warnings box."""
    export = _xlsx_export(world)
    attempt = export_file.start(export.id)
    export_file.succeed(export.id, attempt, size_bytes=10, row_count=1, retention_days=30, warnings=Counter())
    auth.login(world.admin.email)
    assert 'id="file-warnings"' not in client.get(f"/w/{world.workspace.id}/files/{export.id}").get_data(as_text=True)


@pytest.mark.parametrize("code", WARNING_CODES)
def test_every_code_has_a_sentence_that_says_one_or_many(code):
    """Singular and plural read right, and the count is in the sentence."""
    one, many = describe(code, 1), describe(code, 1200)
    assert one.startswith("1 ") and many.startswith("1,200 ")
    assert one != many.replace("1,200", "1")
    assert messages({code: 2, "unknown_code": 0}) == [describe(code, 2)]


def test_xlsx_does_not_depend_on_the_sessions_time_zone(world, app):
    """On a connection defaulting to Asia/Kolkata, 9999-12-31 23:59:59.999999 UTC is written as that day."""
    last = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    factories.make_timesheet_entry(world.employees[0], recorded_at=last)
    export = _xlsx_export(
        world,
        heading="none",
        request={
            "dataset": "timesheet_entries",
            "columns": ["recorded_at"],
            "filters": [],
            "sort": [],
            "row_limit": None,
            "parameters_applied": [],
        },
    )
    access = current_context(world.workspace.id, world.admin.id)
    elsewhere = create_app(connecting_with(app.config["SETTINGS"], "-c timezone=Asia/Kolkata"))
    out = io.BytesIO()
    with elsewhere.app_context():
        assert db.session.execute(text("SHOW timezone")).scalar_one() == "Asia/Kolkata"
        write_query_file(db.session.merge(export), access, out, lambda n, t: None, Counter())
        db.session.remove()
        db.engine.dispose()
    values = [row[0].value for row in load_workbook(io.BytesIO(out.getvalue())).active.iter_rows()]
    assert datetime(9999, 12, 31, 23, 59, 59) in values
