"""The query builder's text conditions and the values it offers to pick from, through the web app."""

from __future__ import annotations

import json

import pytest
from markupsafe import escape
from sqlalchemy import select

from app.extensions import db
from app.models import SavedQuery
from app.services.sources.saved_queries import VALUE_LIST_LIMIT
from tests import factories
from tests.fixtures.routes import HTMX


def _url(world, tail: str = "") -> str:
    return f"/w/{world.workspace.id}/queries/{tail}"


def _values(client, world, column: str, op: str = "in", **more) -> str:
    query = {"dataset": "timesheet_entries", "index": "0", "column": column, "op": op, **more}
    response = client.get(_url(world, "values"), query_string=query, headers=HTMX)
    assert response.status_code == 200
    return response.get_data(as_text=True)


def _option(value: str) -> str:
    """An option of the list as the page writes it: the value sent as a JSON string."""
    return f'<option value="{escape(json.dumps(value))}">{escape(value)}</option>'


def _form(**filters) -> dict:
    return {
        "name": "Picked",
        "dataset": "timesheet_entries",
        "columns": ["person_name", "project"],
        "column_order": ["person_name", "project"],
        "action": "save",
        **filters,
    }


def test_a_column_with_few_values_offers_them_as_a_multiple_choice_list(client, auth, world):
    auth.login(world.admin.email)
    fragment = _values(client, world, "team_name")
    assert 'name="filters-0-picked" multiple' in fragment
    assert _option("Team A") in fragment
    assert _option("Team B") in fragment


def test_another_workspaces_values_are_never_offered(client, auth, world):
    auth.login(world.admin.email)
    assert "Other team" not in _values(client, world, "team_name")


def test_a_scoped_member_is_not_offered_another_teams_values(client, auth, world):
    auth.login(world.scoped.email)
    fragment = _values(client, world, "team_name")
    assert _option("Team A") in fragment
    assert "Team B" not in fragment


def test_a_member_without_the_dataset_grant_is_offered_nothing(client, auth, world):
    member = factories.make_member(world.workspace, dataset_grants=["teams"]).person
    auth.login(member.email)
    fragment = _values(client, world, "team_name")
    assert "<option" not in fragment and 'name="filters-0-value"' in fragment


def test_a_column_with_more_values_than_the_limit_keeps_the_text_field(client, auth, world):
    for n in range(VALUE_LIST_LIMIT + 1):
        factories.make_timesheet_entry(world.employees[0], project=f"Project {n:03d}")
    auth.login(world.admin.email)
    fragment = _values(client, world, "project")
    assert "<option" not in fragment and 'name="filters-0-value"' in fragment


def test_other_text_conditions_suggest_the_values_while_the_text_is_typed(client, auth, world):
    auth.login(world.admin.email)
    fragment = _values(client, world, "team_name", op="ieq", value="team a")
    assert 'name="filters-0-value" value="team a"' in fragment
    assert 'list="filters-0-choices"' in fragment and '<option value="Team B"></option>' in fragment


def test_hostile_values_are_offered_escaped(client, auth, world):
    auth.login(world.admin.email)
    fragment = _values(client, world, "project", op="ieq")
    assert f'<option value="{escape("<b>bold</b> & <i>italic</i>")}"></option>' in fragment
    assert "<b>bold</b>" not in fragment


def test_a_list_for_a_number_column_or_an_unknown_one_is_never_offered(client, auth, world):
    auth.login(world.admin.email)
    assert "<option" not in _values(client, world, "hours")
    assert "<option" not in _values(client, world, "salary")


@pytest.mark.parametrize("index", ["x", "²", "٣", "-1", "9" * 5000, ""])
def test_a_filter_row_past_the_builders_rows_is_not_found(client, auth, world, index):
    auth.login(world.admin.email)
    response = client.get(_url(world, "values"), query_string={"index": index, "column": "project", "op": "in"})
    assert response.status_code == 404


def test_the_builder_asks_for_the_values_of_a_text_filter(client, auth, world):
    auth.login(world.admin.email)
    page = client.post(
        _url(world, "builder"), data=_form(**{"filters-0-column": "team_name", "filters-0-op": "in"})
    ).get_data(as_text=True)
    assert f'hx-get="/w/{world.workspace.id}/queries/values?' in page
    assert 'hx-trigger="load"' in page


def test_picked_values_are_saved_exactly_as_offered(client, auth, world):
    """Values picked from the list keep their commas and spaces; typed ones are split on commas."""
    auth.login(world.admin.email)
    picked = ['"quoted", with comma', "    leading and trailing spaces    "]
    data = _form(**{"filters-0-column": "project", "filters-0-op": "in", "filters-0-picked": picked})
    response = client.post(_url(world, "new"), data=data)
    assert response.status_code == 302
    query = db.session.execute(select(SavedQuery)).scalar_one()
    assert query.filters == [{"column": "project", "op": "in", "value": picked}]
    preview = client.get(_url(world, f"{query.id}/preview"), headers=HTMX).get_data(as_text=True)
    assert "<strong>2 rows in all</strong>" in preview


def test_picked_values_with_line_breaks_arrive_as_stored(client, auth, world):
    """The options send JSON strings: a form would turn a line break into CR LF, and the value would match nothing."""
    auth.login(world.admin.email)
    fragment = _values(client, world, "project")
    picked = ["line one\nline two", "\r=1+1"]
    for value in picked:
        assert _option(value) in fragment
    sent = [json.dumps(value) for value in picked]
    data = _form(**{"filters-0-column": "project", "filters-0-op": "in", "filters-0-picked": sent})
    assert client.post(_url(world, "new"), data=data).status_code == 302
    query = db.session.execute(select(SavedQuery)).scalar_one()
    assert query.filters == [{"column": "project", "op": "in", "value": picked}]
    preview = client.get(_url(world, f"{query.id}/preview"), headers=HTMX).get_data(as_text=True)
    assert "<strong>2 rows in all</strong>" in preview


def test_is_any_case_is_saved_and_previewed(client, auth, world):
    auth.login(world.admin.email)
    data = _form(**{"filters-0-column": "team_name", "filters-0-op": "ieq", "filters-0-value": "TEAM a"})
    response = client.post(_url(world, "new"), data=data)
    assert response.status_code == 302
    query = db.session.execute(select(SavedQuery)).scalar_one()
    preview = client.get(_url(world, f"{query.id}/preview"), headers=HTMX).get_data(as_text=True)
    team_a_rows = len(factories.hostile_values()) // 2 + len(factories.hostile_values()) % 2
    assert f"<strong>{team_a_rows} rows in all</strong>" in preview


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"filters-0-op": "ieq", "filters-0-value": "  "}, "enter the text to compare “Project” with"),
        ({"filters-0-op": "contains", "filters-0-value": ""}, "enter the text to compare “Project” with"),
        ({"filters-0-op": "sounds_like", "filters-0-value": "x"}, "is not a condition the builder offers"),
        ({"filters-0-op": "<script>", "filters-0-value": "x"}, "is not a condition the builder offers"),
        ({"filters-0-op": "in", "filters-0-value": ", ,"}, "list between 1 and 100 values"),
        ({"filters-0-op": "in", "filters-0-picked": ["x"] * 101}, "list between 1 and 100 values"),
        ({"filters-0-op": "contains", "filters-0-value": "x" * 501}, "longer than 500 characters"),
    ],
)
def test_a_bad_text_condition_is_refused_with_a_message_and_saves_nothing(client, auth, world, filters, message):
    auth.login(world.admin.email)
    response = client.post(_url(world, "new"), data=_form(**{"filters-0-column": "project", **filters}))
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert str(escape(message)) in page
    assert "<script>" not in page
    assert db.session.execute(select(SavedQuery)).first() is None


def test_a_bad_text_condition_in_the_preview_is_a_message(client, auth, world):
    auth.login(world.admin.email)
    data = _form(**{"filters-0-column": "project", "filters-0-op": "starts_with", "filters-0-value": ""})
    response = client.post(_url(world, "preview"), data=data)
    assert response.status_code == 200
    assert "No preview." in response.get_data(as_text=True)
