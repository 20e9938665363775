"""The query's file request form in Chromium: the descriptions row can be ticked for Excel only, and a
double click asks for one file."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from app.blueprints.queries import routes
from app.models import QueryExport
from tests import factories
from tests.fixtures.browser import fresh, sign_in


@pytest.mark.browser
def test_picking_csv_disables_the_descriptions_row_and_xlsx_enables_it(
    world, live_server, browser_page, browser_console_errors
):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/{query.id}")
    descriptions = page.get_by_label("Add a row of column descriptions under the headings")

    assert page.get_by_label("CSV").is_checked()
    assert descriptions.is_disabled()

    page.get_by_label("Excel (XLSX)").check()
    assert descriptions.is_enabled()
    descriptions.check()

    page.get_by_label("CSV").check()
    assert descriptions.is_disabled() and not descriptions.is_checked()
    assert browser_console_errors == []


@pytest.mark.browser
def test_a_second_click_while_the_first_is_on_its_way_makes_no_second_file(
    world, live_server, browser_page, browser_console_errors, monkeypatch
):
    """The server answers slowly, so the person clicks Request file again: Chromium sends the form
    twice with the same token, and both answers lead to the one file."""
    admit_file = routes.request_query_file

    def slow_admission(*args, **kwargs):
        time.sleep(1)
        return admit_file(*args, **kwargs)

    monkeypatch.setattr(routes, "request_query_file", slow_admission)
    query = factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/{query.id}")
    posts: list[str] = []
    page.on("request", lambda sent: posts.append(sent.url) if sent.method == "POST" else None)

    # Both clicks in the page itself: Playwright's own click would wait for the first navigation.
    page.get_by_role("button", name="Request file").evaluate(
        "button => { button.click(); setTimeout(() => button.click(), 200); }"
    )
    # The first navigation is aborted by the second, so the address is polled, not awaited.
    expect(page).to_have_url(re.compile(r"/files/\d+$"))
    page.wait_for_load_state()

    only = fresh(select(QueryExport)).scalar_one()
    assert len(posts) == 2
    assert page.url.endswith(f"/files/{only.id}")
    assert browser_console_errors == []
