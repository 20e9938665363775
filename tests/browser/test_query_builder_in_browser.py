"""The query builder's value list in Chromium: fetched with htmx under the CSP, limited to the person's rows."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.models import SavedQuery
from tests import factories
from tests.fixtures.browser import fresh, htmx_swap, sign_in


@pytest.mark.browser
def test_a_scoped_member_picks_is_one_of_values_from_their_own_teams_only(
    world, live_server, browser_page, browser_console_errors
):
    page = browser_page
    sign_in(page, live_server, world.scoped.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/new")
    page.get_by_label("Name", exact=True).fill("My team's hours")
    htmx_swap(page, lambda: page.locator('select[name="dataset"]').select_option("timesheet_entries"))
    htmx_swap(page, lambda: page.locator('input[name="columns"][value="person_name"]').click())
    htmx_swap(page, lambda: page.get_by_role("button", name="Add a filter").click())
    htmx_swap(page, lambda: page.locator('select[name="filters-0-column"]').select_option("team_name"))
    htmx_swap(page, lambda: page.locator('select[name="filters-0-op"]').select_option("in"))

    picked = page.locator('select[name="filters-0-picked"]')
    picked.wait_for()
    assert picked.locator("option").all_text_contents() == ["Team A"]
    picked.select_option("Team A")
    page.get_by_role("button", name="Save query").click()
    page.wait_for_url(re.compile(r"/queries/\d+$"))

    query = fresh(select(SavedQuery)).scalar_one()
    assert query.filters == [{"column": "team_name", "op": "in", "value": ["Team A"]}]
    assert browser_console_errors == []


@pytest.mark.browser
def test_a_saved_querys_filters_read_without_the_builders_hints(world, live_server, browser_page):
    query = factories.make_query(
        world.workspace,
        world.member,
        filters=[
            {"column": "project", "op": "eq", "value": "pending"},
            {"column": "note", "op": "in", "value": ["a", "b"]},
        ],
    )
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/{query.id}")

    filters = [" ".join((text or "").split()) for text in page.locator("dd ul li").all_text_contents()]
    assert "Project is exactly pending" in filters
    assert "Note is one of a, b" in filters
    assert not any("(" in text for text in filters)
