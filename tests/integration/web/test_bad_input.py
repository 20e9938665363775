"""Bad input from issue 8: each case answered 500 (or half-saved a record); now a clear message or 404.

Integers beyond the database's range, digits Python reads but forms should not, and NUL bytes,
in the URL and in the forms. Every refused request leaves the tables as they were.
"""

from __future__ import annotations

import pytest
from markupsafe import escape
from sqlalchemy import event, func, select

from app.extensions import db
from app.models import ExportFile, Person, Report, SavedQuery
from tests import factories
from tests.fixtures.routes import HTMX

BEYOND_INTEGER = str(2**31)
HUGE = "9" * 5000
DAMAGED_VERSIONS = [BEYOND_INTEGER, HUGE, "²", "٣"]


def _count(model) -> int:
    return db.session.scalar(select(func.count()).select_from(model))


def _page(response) -> str:
    return response.get_data(as_text=True)


def _query_form(**overrides) -> dict:
    data = {
        "name": "Long days",
        "dataset": "timesheet_entries",
        "columns": ["person_name", "hours", "note"],
        "column_order": ["person_name", "hours", "note"],
        "filters-0-column": "hours",
        "filters-0-op": "ge",
        "filters-0-value": "7",
        "action": "save",
    }
    return {**data, **overrides}


def _report_form(query: SavedQuery, **overrides) -> dict:
    data = {
        "name": "Hours by team",
        "kind": "table",
        "source_query_id": str(query.id),
        "columns": ["person_name", "hours"],
        "title": "Hours",
        "page_size": "A4",
        "orientation": "portrait",
        "action": "save",
    }
    return {**data, **overrides}


@pytest.fixture
def signed_in(client, auth, world):
    """The world's member, signed in, owning a query."""
    auth.login(world.member.email)
    query = factories.make_query(world.workspace, world.member, name="Member's query")
    return world, query


class StatementLog:
    """The SQL statements the app sends while it is open."""

    def __init__(self):
        self.statements: list[str] = []

    def __call__(self, conn, cursor, statement, parameters, context, executemany):
        self.statements.append(statement)

    def touching(self, table: str) -> list[str]:
        return [s for s in self.statements if f"FROM {table}" in s or f"JOIN {table}" in s]


@pytest.fixture
def statements(app):
    log = StatementLog()
    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", log)
    yield log
    event.remove(engine, "before_cursor_execute", log)


@pytest.mark.parametrize(
    ("tail", "table"),
    [
        (f"queries/{BEYOND_INTEGER}", "saved_queries"),
        (f"queries/{BEYOND_INTEGER}/edit", "saved_queries"),
        (f"reports/{BEYOND_INTEGER}", "reports"),
        (f"reports/{BEYOND_INTEGER}/delete", "reports"),
        (f"files/{BEYOND_INTEGER}", "query_exports"),
        (f"files/{HUGE[:40]}/download", "query_exports"),
    ],
)
def test_an_id_beyond_the_database_range_answers_404_without_a_query(client, signed_in, statements, tail, table):
    world, _ = signed_in
    response = client.get(f"/w/{world.workspace.id}/{tail}")
    assert response.status_code == 404
    assert statements.touching(table) == []


@pytest.mark.parametrize("workspace_id", [BEYOND_INTEGER, "9" * 23, HUGE])
def test_a_workspace_id_beyond_the_database_range_answers_404_without_a_query(
    client, signed_in, statements, workspace_id
):
    response = client.get(f"/w/{workspace_id}/queries/")
    assert response.status_code == 404
    assert statements.touching("memberships") == []


@pytest.mark.parametrize("version", DAMAGED_VERSIONS)
def test_a_query_edit_with_a_damaged_version_is_refused_and_changes_nothing(client, signed_in, version):
    world, query = signed_in
    response = client.post(
        f"/w/{world.workspace.id}/queries/{query.id}/edit", data=_query_form(name="Renamed", version=version)
    )
    assert response.status_code == 400
    assert "Reload the page" in _page(response)
    db.session.refresh(query)
    assert (query.name, query.version) == ("Member's query", 1)


@pytest.mark.parametrize("version", DAMAGED_VERSIONS)
def test_a_report_edit_with_a_damaged_version_is_refused_and_changes_nothing(client, signed_in, version):
    world, query = signed_in
    report = factories.make_report(query, world.member, name="Member's report", title="Member's report")
    response = client.post(
        f"/w/{world.workspace.id}/reports/{report.id}/edit", data=_report_form(query, name="Renamed", version=version)
    )
    assert response.status_code == 400
    assert "Reload the page" in _page(response)
    db.session.refresh(report)
    assert (report.name, report.version) == ("Member's report", 1)


@pytest.mark.parametrize("source_query_id", [BEYOND_INTEGER, HUGE, "٣", "1\x00"])
@pytest.mark.parametrize("endpoint", ["new", "preview"])
def test_a_report_naming_a_query_id_beyond_range_gets_the_choose_a_query_message(
    client, signed_in, source_query_id, endpoint
):
    world, query = signed_in
    response = client.post(
        f"/w/{world.workspace.id}/reports/{endpoint}", data=_report_form(query, source_query_id=source_query_id)
    )
    assert response.status_code in (200, 400)
    assert "Choose the saved query the report presents." in _page(response)
    assert _count(Report) == 0


@pytest.mark.parametrize("endpoint", ["new", "builder"])
@pytest.mark.parametrize("index", ["²", "٣", HUGE])
def test_removing_a_filter_by_a_non_ascii_or_huge_index_removes_nothing(client, signed_in, endpoint, index):
    world, _ = signed_in
    response = client.post(
        f"/w/{world.workspace.id}/queries/{endpoint}", data=_query_form(action=f"remove_filter:{index}")
    )
    assert response.status_code == 200
    assert 'name="filters-0-value" value="7"' in _page(response)


@pytest.mark.parametrize(
    ("overrides", "field_message"),
    [
        ({"filters-0-value": "٧"}, "is not a whole number"),
        ({"filters-0-value": "1_000"}, "is not a whole number"),
        ({"filters-0-column": "hours", "filters-0-value": "٣.5"}, "is not a number"),
        ({"row_limit": "١٠"}, "The row limit is a whole number"),
        ({"row_limit": HUGE}, "The row limit is between 1 and"),
    ],
)
def test_numbers_in_other_digits_are_refused_with_a_message(client, signed_in, overrides, field_message):
    world, _ = signed_in
    overrides = {"filters-0-column": "id", **overrides}
    response = client.post(f"/w/{world.workspace.id}/queries/new", data=_query_form(**overrides))
    assert response.status_code == 400
    assert str(escape(field_message)) in _page(response)
    assert _count(SavedQuery) == 1


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": "Night\x00shift"}, "in the name."),
        ({"filters-0-column": "note", "filters-0-op": "eq", "filters-0-value": "a\x00b"}, "in filter 1."),
        ({"filters-0-column": "note", "filters-0-op": "in", "filters-0-value": "a,b\x00"}, "in filter 1."),
        ({"columns": ["person_name", "hours\x00"]}, "in the columns."),
    ],
)
@pytest.mark.parametrize("action", ["new", "edit"])
def test_a_nul_in_a_query_field_is_refused_and_nothing_is_saved(client, signed_in, overrides, message, action):
    world, query = signed_in
    url = f"/w/{world.workspace.id}/queries/" + ("new" if action == "new" else f"{query.id}/edit")
    response = client.post(url, data=_query_form(**overrides))
    assert response.status_code == 400
    assert f"There is a character that cannot be saved (a NUL or another invalid character) {message}" in _page(
        response
    )
    assert _count(SavedQuery) == 1
    db.session.refresh(query)
    assert (query.name, query.version, query.filters) == ("Member's query", 1, [])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": "Hours\x00"}, "in the name."),
        ({"title": "Ti\x00tle"}, "in the title."),
        ({"subtitle": "\x00"}, "in the subtitle."),
        (
            {"kind": "coded", "code_column": "team_name", "code_descriptions": "A = Day\x00"},
            "in the code descriptions.",
        ),
        ({"kind": "summary", "figures-0-function": "count", "figures-0-label": "Rows\x00"}, "in the summary figures."),
    ],
)
def test_a_nul_in_a_report_field_is_refused_and_nothing_is_saved(client, signed_in, overrides, message):
    world, query = signed_in
    response = client.post(f"/w/{world.workspace.id}/reports/new", data=_report_form(query, **overrides))
    assert response.status_code == 400
    assert message in _page(response)
    assert _count(Report) == 0


def test_a_nul_in_the_sign_in_email_is_a_form_error(client, world):
    response = client.post("/login", data={"email": "member\x00@example.test", "password": "password"})
    assert response.status_code == 400
    assert "cannot be used" in _page(response)
    assert db.session.scalar(select(func.sum(Person.failed_logins))) == 0


def test_a_query_saved_with_a_nul_before_the_fix_previews_and_requests_with_a_message(client, signed_in):
    """The stored definition is checked again: preview and file request explain instead of failing."""
    world, _ = signed_in
    saved = factories.make_query(
        world.workspace, world.member, filters=[{"column": "note", "op": "eq", "value": "a\x00b"}]
    )
    preview = client.get(f"/w/{world.workspace.id}/queries/{saved.id}/preview", headers=HTMX)
    assert preview.status_code == 200
    assert "cannot be saved (a NUL or another invalid character) in filter 1." in _page(preview)

    requested = client.post(f"/w/{world.workspace.id}/queries/{saved.id}/files", data={"format": "csv"})
    assert requested.status_code == 400
    assert "cannot be saved (a NUL or another invalid character) in filter 1." in _page(requested)
    assert _count(ExportFile) == 0
