"""The Queries pages: list, build, edit, delete and preview saved queries."""

from __future__ import annotations

import re

import pytest
from markupsafe import escape
from sqlalchemy import func, select

from app.extensions import db
from app.models import AuditEvent, Report, SavedQuery
from tests import factories
from tests.fixtures.routes import HTMX


def _count_queries() -> int:
    return db.session.scalar(select(func.count()).select_from(SavedQuery))


def _url(world, tail: str = "") -> str:
    return f"/w/{world.workspace.id}/queries/{tail}"


def _form(**overrides) -> dict:
    """A complete, valid builder form as the page posts it; keyword arguments replace fields."""
    data = {
        "name": "Long days",
        "dataset": "timesheet_entries",
        "columns": ["person_name", "work_date", "hours"],
        "column_order": ["person_name", "work_date", "hours"],
        "filters-0-column": "hours",
        "filters-0-op": "ge",
        "filters-0-value": "7",
        "sort-0-column": "work_date",
        "sort-0-direction": "desc",
        "parameters-0-column": "work_date",
        "parameters-0-range": "last_30_days",
        "row_limit": "500",
        "action": "save",
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def _column_order(html: str) -> list[str]:
    return re.findall(r'name="column_order" value="([^"]+)"', html)


def test_list_shows_name_dataset_version_updated_and_owner(client, auth, world):
    """The list names each query with its dataset label, version, update time and owner."""
    factories.make_query(world.workspace, world.admin, name="Hours this month", version=3)
    auth.login(world.member.email)
    page = client.get(_url(world)).get_data(as_text=True)
    assert "Hours this month" in page
    assert "Timesheet entries" in page
    assert '<td class="num">3</td>' in page
    assert world.admin.name in page
    assert "UTC" in page


def test_queries_on_datasets_the_member_cannot_read_are_hidden(client, auth, world, app):
    """A query on a dataset the member was not granted is not listed, and its URL answers 404."""
    hidden = factories.make_query(world.workspace, world.admin, name="Secret timesheets")
    factories.make_query(world.workspace, world.admin, name="Visible people", dataset="people", columns=["full_name"])
    reader = factories.make_member(world.workspace, dataset_grants=["people"]).person
    auth.login(reader.email)
    page = client.get(_url(world)).get_data(as_text=True)
    assert "Visible people" in page
    assert "Secret timesheets" not in page
    assert client.get(_url(world, str(hidden.id))).status_code == 404
    assert client.get(_url(world, f"{hidden.id}/preview")).status_code == 404


def test_creating_a_query_saves_the_definition_with_columns_in_order(client, auth, world):
    """Saving the builder stores the normalised definition, columns in the order chosen, as version 1."""
    auth.login(world.member.email)
    response = client.post(
        _url(world, "new"),
        data=_form(columns=["hours", "person_name"], column_order=["person_name", "hours", "work_date"]),
    )
    assert response.status_code == 302
    query = db.session.execute(select(SavedQuery)).scalar_one()
    assert response.headers["Location"].endswith(f"/queries/{query.id}")
    assert query.owner_id == world.member.id
    assert query.columns == ["person_name", "hours"]
    assert query.filters == [{"column": "hours", "op": "ge", "value": "7"}]
    assert query.sort == [{"column": "work_date", "direction": "desc"}]
    assert query.parameters == [{"column": "work_date", "range": "last_30_days"}]
    assert query.row_limit == 500
    assert query.version == 1


def test_editing_a_query_bumps_its_version_and_update_time(client, auth, world):
    """Saving an edit stores the new definition, adds one to the version and moves updated_at."""
    query = factories.make_query(world.workspace, world.member, name="Before")
    before = query.updated_at
    auth.login(world.member.email)
    response = client.post(_url(world, f"{query.id}/edit"), data=_form(name="After", version="1"))
    assert response.status_code == 302
    db.session.refresh(query)
    assert (query.name, query.version, query.row_limit) == ("After", 2, 500)
    assert query.updated_at > before


def test_saving_over_someone_elses_change_is_a_conflict_that_keeps_the_typing(client, auth, world):
    """Two saves from the same opened version: the second would undo the first, so it answers 409
    with the typing kept and a link to the query as it is now, and writes nothing."""
    query = factories.make_query(world.workspace, world.member, name="Shared")
    opened, edit_url = str(query.version), _url(world, f"{query.id}/edit")
    auth.login(world.member.email)
    assert client.post(edit_url, data=_form(name="First", version=opened)).status_code == 302

    second = client.post(edit_url, data=_form(name="Second", version=opened))

    page = second.get_data(as_text=True)
    assert second.status_code == 409
    assert (
        "Someone else changed this query after you opened it. Reload it to see their changes, then make yours again."
        in page
    )
    assert f'<a href="{edit_url}">Reload the query</a>' in page
    assert 'value="Second"' in page
    db.session.refresh(query)
    assert (query.name, query.version) == ("First", 2)
    assert db.session.scalar(select(func.count()).where(AuditEvent.action == "query.changed")) == 1


def test_the_edit_form_shows_the_saved_definition(client, auth, world):
    """Opening the editor shows the saved name, columns in order, filters, sort and limit."""
    query = factories.make_query(
        world.workspace,
        world.member,
        name="Approved hours",
        columns=["hours", "person_name"],
        filters=[{"column": "hours", "op": "between", "value": ["1", "8"]}],
        row_limit=25,
    )
    auth.login(world.member.email)
    page = client.get(_url(world, f"{query.id}/edit")).get_data(as_text=True)
    assert 'value="Approved hours"' in page
    assert _column_order(page)[:2] == ["hours", "person_name"]
    assert 'name="filters-0-value" value="1,8"' in page
    assert 'name="row_limit" value="25"' in page


def test_delete_asks_for_confirmation_and_deletes_only_on_post(client, auth, world):
    """GET shows a confirmation and keeps the query; POST removes it and returns to the list."""
    query = factories.make_query(world.workspace, world.member, name="Old query")
    auth.login(world.member.email)
    confirmation = client.get(_url(world, f"{query.id}/delete"))
    assert confirmation.status_code == 200
    assert "Delete “Old query”?" in confirmation.get_data(as_text=True)
    assert _count_queries() == 1
    response = client.post(_url(world, f"{query.id}/delete"))
    assert response.status_code == 302
    assert _count_queries() == 0


def test_a_query_that_a_report_presents_cannot_be_deleted(client, auth, world):
    """Deleting a query a report uses names the report, answers 409 and keeps the query."""
    query = factories.make_query(world.workspace, world.member, name="Presented query")
    db.session.add(
        Report(
            workspace_id=world.workspace.id,
            owner_id=world.member.id,
            name="Weekly hours report",
            kind="table",
            source_query_id=query.id,
            columns=[{"name": "hours", "width": None}],
            title="Weekly hours",
        )
    )
    db.session.commit()
    auth.login(world.member.email)
    confirmation = client.get(_url(world, f"{query.id}/delete")).get_data(as_text=True)
    assert "Weekly hours report" in confirmation
    assert "Delete query</button>" not in confirmation
    response = client.post(_url(world, f"{query.id}/delete"))
    assert response.status_code == 409
    assert "Weekly hours report" in response.get_data(as_text=True)
    assert _count_queries() == 1


def test_a_member_cannot_change_someone_elses_query(client, auth, world):
    """Edit and delete of another person's query answer 404 to a member, as the report's do, and change nothing."""
    query = factories.make_query(world.workspace, world.admin, name="Admin's query")
    auth.login(world.member.email)
    assert client.get(_url(world, f"{query.id}/edit")).status_code == 404
    assert client.post(_url(world, f"{query.id}/edit"), data=_form(name="Taken over")).status_code == 404
    assert client.post(_url(world, f"{query.id}/delete")).status_code == 404
    db.session.refresh(query)
    assert (query.name, query.version) == ("Admin's query", 1)


def test_an_admin_can_change_a_members_query(client, auth, world):
    """An administrator may edit another person's query."""
    query = factories.make_query(world.workspace, world.member, name="Member's query")
    auth.login(world.admin.email)
    response = client.post(_url(world, f"{query.id}/edit"), data=_form(name="Reviewed", version="1"))
    assert response.status_code == 302
    db.session.refresh(query)
    assert (query.name, query.version, query.owner_id) == ("Reviewed", 2, world.member.id)


BAD_INPUT = [
    pytest.param({"columns": ["person_name", "salary"]}, "columns", "Unknown column “salary”", id="unknown-column"),
    pytest.param({"columns": None, "column_order": None}, "columns", "Choose at least one column", id="no-columns"),
    pytest.param({"filters-0-column": "salary"}, "filters-0", "unknown column “salary”", id="unknown-filter-column"),
    pytest.param(
        {"filters-0-column": "id", "filters-0-op": "eq", "filters-0-value": "abc"},
        "filters-0",
        "is not a whole number",
        id="text-for-a-number",
    ),
    pytest.param(
        {"filters-0-column": "id", "filters-0-op": "eq", "filters-0-value": "2147483648"},
        "filters-0",
        "is outside the range of “Entry ID”",
        id="number-beyond-the-column",
    ),
    pytest.param(
        {"filters-0-column": "id", "filters-0-op": "between", "filters-0-value": "-2147483649,5"},
        "filters-0",
        "is outside the range of “Entry ID”",
        id="number-below-the-column",
    ),
    pytest.param(
        {"filters-0-column": "work_date", "filters-0-op": "eq", "filters-0-value": "2026-13-45"},
        "filters-0",
        "is not a date",
        id="impossible-date",
    ),
    pytest.param(
        {"filters-0-column": "note", "filters-0-op": "gt"}, "filters-0", "cannot be used on", id="wrong-operator"
    ),
    pytest.param({"dataset": "salaries"}, "dataset", "Choose a dataset", id="unknown-dataset"),
    pytest.param({"sort-0-column": "salary"}, "sort", "Unknown sort column", id="unknown-sort-column"),
    pytest.param({"parameters-0-column": "note"}, "parameters", "date or date-time column", id="range-on-text"),
    pytest.param({"row_limit": "0"}, "row_limit", "The row limit is between 1 and", id="limit-zero"),
    pytest.param({"row_limit": "-5"}, "row_limit", "The row limit is between 1 and", id="limit-negative"),
    pytest.param({"row_limit": str(10**12)}, "row_limit", "The row limit is between 1 and", id="limit-huge"),
    pytest.param({"row_limit": "abc"}, "row_limit", "The row limit is a whole number", id="limit-text"),
    pytest.param({"name": "   "}, "name", "Give the query a name", id="blank-name"),
    pytest.param({"name": "x" * 201}, "name", "longer than 200 characters", id="long-name"),
    pytest.param({"name": "Weekly\u2028hours"}, "name", "must be a single line", id="name-with-a-line-break"),
]


@pytest.mark.parametrize(("overrides", "field", "message"), BAD_INPUT)
def test_bad_input_gives_a_message_by_the_field_and_saves_nothing(client, auth, world, overrides, field, message):
    """Refused input answers 400 with the message next to its field, keeps what was typed, saves no row."""
    auth.login(world.member.email)
    response = client.post(_url(world, "new"), data=_form(**overrides))
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert f'id="error-{field}"' in page
    assert str(escape(message)) in page
    assert "The query was not saved." in page
    row_limit = overrides.get("row_limit", "500")
    assert f'name="row_limit" value="{escape(row_limit)}"' in page
    assert _count_queries() == 0


def test_a_bad_edit_leaves_the_saved_query_unchanged(client, auth, world):
    """An edit with an absurd row limit is refused with a message; the saved version is untouched."""
    query = factories.make_query(world.workspace, world.member, name="Steady", row_limit=10)
    auth.login(world.member.email)
    response = client.post(_url(world, f"{query.id}/edit"), data=_form(name="Changed", row_limit="0", version="1"))
    assert response.status_code == 400
    assert 'id="error-row_limit"' in response.get_data(as_text=True)
    db.session.refresh(query)
    assert (query.name, query.version, query.row_limit) == ("Steady", 1, 10)


def test_a_name_already_used_in_the_workspace_is_refused(client, auth, world):
    """Two queries of one workspace cannot share a name (letter case aside)."""
    factories.make_query(world.workspace, world.admin, name="Weekly hours")
    auth.login(world.member.email)
    response = client.post(_url(world, "new"), data=_form(name="weekly HOURS"))
    assert response.status_code == 400
    assert "already has that name" in response.get_data(as_text=True)
    assert _count_queries() == 1


def test_a_dataset_the_member_cannot_read_cannot_be_saved(client, auth, world):
    """A member without the grant cannot save a query on that dataset, even by posting its name."""
    reader = factories.make_member(world.workspace, dataset_grants=["people"]).person
    auth.login(reader.email)
    response = client.post(_url(world, "new"), data=_form())
    assert response.status_code == 400
    assert "You do not have access to that dataset." in response.get_data(as_text=True)
    assert _count_queries() == 0


def test_changing_the_dataset_rerenders_the_builder_with_its_columns(client, auth, world):
    """The builder fragment for a newly chosen dataset offers that dataset's columns and clears the rest."""
    auth.login(world.member.email)
    response = client.post(_url(world, "builder"), data=_form(dataset="people", action="dataset"))
    fragment = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "<html" not in fragment
    assert "full_name" in _column_order(fragment)
    assert "work_date" not in _column_order(fragment)
    assert "filters-0-column" not in fragment
    assert 'name="row_limit" value="500"' in fragment


def test_builder_buttons_work_without_javascript_and_save_nothing(client, auth, world):
    """Pressing "Add a filter" posts the page, which comes back with one more filter row and no save."""
    auth.login(world.member.email)
    response = client.post(_url(world, "new"), data=_form(action="add_filter"))
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert 'name="filters-1-column"' in page
    assert 'name="filters-0-value" value="7"' in page
    assert _count_queries() == 0


def test_moving_a_column_up_changes_the_file_order(client, auth, world):
    """The up arrow moves a chosen column one place earlier."""
    auth.login(world.member.email)
    response = client.post(_url(world, "builder"), data=_form(action="up:hours"))
    assert _column_order(response.get_data(as_text=True))[:3] == ["person_name", "hours", "work_date"]


def test_removing_a_filter_row_keeps_the_others(client, auth, world):
    """Removing the first of two filters leaves the second, renumbered."""
    auth.login(world.member.email)
    data = _form(
        action="remove_filter:0", **{"filters-1-column": "note", "filters-1-op": "contains", "filters-1-value": "x"}
    )
    fragment = client.post(_url(world, "builder"), data=data).get_data(as_text=True)
    assert '<option value="note" selected>' in fragment
    assert 'name="filters-0-value" value="x"' in fragment
    assert "filters-1-column" not in fragment


def test_preview_of_a_saved_query_shows_rows_neutralised_and_escaped(client, auth, world):
    """Preview shows rows as a file would hold them: formula-like text prefixed, markup escaped."""
    query = factories.make_query(world.workspace, world.admin, columns=["id", "note"])
    auth.login(world.admin.email)
    response = client.get(_url(world, f"{query.id}/preview"), headers=HTMX)
    fragment = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "<html" not in fragment
    assert str(escape("'=1+2")) in fragment
    assert str(escape("'@SUM(A1:A2)")) in fragment
    assert str(escape("<b>bold</b> & <i>italic</i>")) in fragment
    assert "<b>bold</b>" not in fragment
    assert "Дмитрий Шостакович" in fragment


def test_preview_of_the_unsaved_form_uses_what_was_typed(client, auth, world):
    """The form's preview runs the definition as typed, without saving it."""
    auth.login(world.admin.email)
    data = _form(
        columns=["id", "note"],
        **{"filters-0-column": "note", "filters-0-op": "eq", "filters-0-value": "semi;colon;separated"},
        **{"parameters-0-column": None, "parameters-0-range": None},
    )
    fragment = client.post(_url(world, "preview"), data=data).get_data(as_text=True)
    assert "semi;colon;separated" in fragment
    assert str(escape("'=1+2")) not in fragment
    assert _count_queries() == 0


def test_preview_of_bad_input_is_a_message_not_an_error(client, auth, world):
    """Preview of an invalid form answers 200 with the validation message in the fragment."""
    auth.login(world.admin.email)
    response = client.post(_url(world, "preview"), data=_form(row_limit="10000000000000"))
    assert response.status_code == 200
    assert "The row limit is between 1 and" in response.get_data(as_text=True)


def test_a_scoped_members_preview_hides_other_teams_rows(client, auth, world):
    """A member scoped to team A sees only team A's rows in the preview."""
    query = factories.make_query(world.workspace, world.admin, columns=["team_name", "person_name"])
    auth.login(world.scoped.email)
    fragment = client.get(_url(world, f"{query.id}/preview"), headers=HTMX).get_data(as_text=True)
    assert ">Team A</td>" in fragment
    assert "Team B" not in fragment


def test_the_query_page_shows_its_definition_and_the_file_request_form(client, auth, world):
    """The query page lists columns, filters and date range, and offers CSV or XLSX with headings."""
    query = factories.make_query(
        world.workspace,
        world.admin,
        name="Recent long days",
        filters=[{"column": "hours", "op": "ge", "value": "8"}],
        parameters=[{"column": "work_date", "range": "last_7_days"}],
    )
    auth.login(world.member.email)
    page = client.get(_url(world, str(query.id))).get_data(as_text=True)
    assert "Hours ≥ 8" in page
    assert "Date: Last 7 days" in page
    assert 'value="xlsx"' in page
    assert "Column labels" in page
    assert "Excel (XLSX) only" in page
    assert f"/queries/{query.id}/edit" not in page


def test_preview_of_a_query_saved_with_a_number_beyond_its_column_says_why(client, auth, world):
    """A definition stored before the range was checked previews as a message, not a 500."""
    query = factories.make_query(
        world.workspace, world.admin, filters=[{"column": "id", "op": "eq", "value": 2147483648}]
    )
    auth.login(world.admin.email)
    response = client.get(_url(world, f"{query.id}/preview"), headers=HTMX)
    assert response.status_code < 500
    assert "is outside the range of" in response.get_data(as_text=True)
