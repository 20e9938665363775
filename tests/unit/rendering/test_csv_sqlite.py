"""The portable path on SQLite (the embedded default): CSV through csv.writer, and XLSX."""

from __future__ import annotations

import csv
import io
from collections import Counter
from types import SimpleNamespace

import pytest
from openpyxl import load_workbook

from app.data.query_runner import iter_rows
from app.domain.people.access import RequesterContext
from app.domain.sources.stored_request import FileRequest
from app.extensions import db
from app.rendering.csv_writer import BOM
from app.rendering.neutralise import neutralise
from app.rendering.xlsx_cells import ooxml_text
from app.services.files.query_file_production import write_query_file
from tests import factories


@pytest.fixture
def sqlite_world(sqlite_app):
    """A SQLite app with one workspace, an admin, a team-scoped member and one entry per hostile value."""
    application = sqlite_app()
    with application.app_context():
        db.create_all()
        workspace = factories.make_workspace()
        admin = factories.make_member(workspace, role="admin")
        team_a, team_b = factories.make_team(workspace, name="Team A"), factories.make_team(workspace, name="Team B")
        employees = [factories.make_team_member(team_a), factories.make_team_member(team_b)]
        for i, value in enumerate(factories.hostile_values()):
            factories.make_timesheet_entry(employees[i % 2], note=value)
        scoped = factories.make_member(workspace, team_scope=[team_a.id])
        yield SimpleNamespace(
            admin=admin.person,
            access=RequesterContext.of(admin),
            scoped_access=RequesterContext.of(scoped),
            employee=employees[0],
            query=factories.make_query(workspace, admin.person, sort=[{"column": "id", "direction": "asc"}]),
        )
        db.session.remove()


def _file(world, format: str) -> tuple[bytes, int]:
    out = io.BytesIO()
    export = factories.make_export(world.query, world.admin, format=format)
    rows = write_query_file(export, world.access, out, lambda n, t: None, Counter()).count
    return out.getvalue(), rows


def test_sqlite_csv_has_bom_crlf_heading_and_neutralised_text(sqlite_world):
    """On SQLite the Python path writes BOM, CRLF records, the names heading and neutralised notes."""
    data, rows = _file(sqlite_world, "csv")
    columns = sqlite_world.query.columns
    assert data.startswith(BOM)
    records = list(csv.reader(io.StringIO(data[len(BOM) :].decode("utf-8"), newline="")))
    assert records[0] == columns
    assert rows == len(records) - 1 == len(factories.hostile_values())
    assert [r[columns.index("note")] for r in records[1:]] == [neutralise(v) for v in factories.hostile_values()]
    assert records[1][columns.index("hours")] == "7.50"
    assert data.count(b"\r\n") == rows + 1


def test_sqlite_rows_respect_team_scope(sqlite_world):
    """A member scoped to team A reads team A's rows only on SQLite too."""
    request = FileRequest.from_json({**factories.stored_request(sqlite_world.query), "columns": ["team_name"]})
    assert {row[0] for row in iter_rows(request, sqlite_world.scoped_access)} == {"Team A"}


def test_sqlite_contains_filter_treats_percent_literally(sqlite_world):
    """LIKE wildcards in a contains value are escaped on SQLite as on PostgreSQL."""
    factories.make_timesheet_entry(sqlite_world.employee, note="50% done")
    factories.make_timesheet_entry(sqlite_world.employee, note="500 done")
    request = FileRequest.from_json(
        {
            **factories.stored_request(sqlite_world.query),
            "columns": ["note"],
            "filters": [{"column": "note", "op": "contains", "value": "0%"}],
        }
    )
    assert [row[0] for row in iter_rows(request, sqlite_world.access)] == ["50% done"]


def test_sqlite_xlsx_reads_back(sqlite_world):
    """An XLSX file written from SQLite opens with every hostile note exact (as OOXML-escaped text) as a string."""
    data, _ = _file(sqlite_world, "xlsx")
    sheet = load_workbook(io.BytesIO(data)).active
    notes = [row[sqlite_world.query.columns.index("note")] for row in sheet.iter_rows(min_row=2)]
    assert [c.value for c in notes] == [ooxml_text(v) for v in factories.hostile_values()]
    assert {c.data_type for c in notes} == {"s"}
