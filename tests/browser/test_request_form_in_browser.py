"""The query's file request form in Chromium: the descriptions row can be ticked for Excel only, a
double click asks for one file, and after Back the form the browser restored answers its first file
unless a choice was changed, while "Request another file" on the file page makes a second one."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from app.blueprints.queries import routes
from app.models import ExportFile
from tests import factories
from tests.fixtures.browser import fresh, request_file, sign_in


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

    only = fresh(select(ExportFile)).scalar_one()
    assert len(posts) == 2
    assert page.url.endswith(f"/files/{only.id}")
    assert browser_console_errors == []


def _open_request_form(page, live_server, world, query) -> str:
    """Sign in, open the query's page; the request form's one-time token."""
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/{query.id}")
    return page.locator("input[name=request_token]").input_value()


def _back_to_the_restored_form(page, live_server, world, query, token: str) -> None:
    """Back from the file page: Chromium shows the query page from its back/forward cache, the same
    rendered form with the same token (no load event, so the navigation is awaited to its commit)."""
    page.go_back(wait_until="commit")
    page.wait_for_url(f"{live_server}/w/{world.workspace.id}/queries/{query.id}", wait_until="commit")
    assert page.locator("input[name=request_token]").input_value() == token


@pytest.mark.browser
def test_back_then_sending_the_restored_form_again_shows_the_first_file(
    world, live_server, back_cache_page, browser_console_errors
):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    page = back_cache_page
    token = _open_request_form(page, live_server, world, query)
    first = request_file(page)

    _back_to_the_restored_form(page, live_server, world, query, token)
    again = request_file(page)

    assert again.id == first.id
    assert page.url.endswith(f"/files/{first.id}")
    expect(page.get_by_role("status").filter(has_text="This form was already sent with these choices")).to_be_visible()
    assert browser_console_errors == []


@pytest.mark.browser
def test_back_then_choosing_excel_on_the_restored_form_makes_a_second_file(
    world, live_server, back_cache_page, browser_console_errors
):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    page = back_cache_page
    token = _open_request_form(page, live_server, world, query)
    first = request_file(page)

    _back_to_the_restored_form(page, live_server, world, query, token)
    page.get_by_label("Excel (XLSX)").check()
    second = request_file(page, ExportFile.id != first.id)

    assert (first.format, second.format) == ("csv", "xlsx")
    assert page.url.endswith(f"/files/{second.id}")
    assert browser_console_errors == []


@pytest.mark.browser
def test_request_another_file_from_the_file_page_makes_a_second_file_of_the_same_choices(
    world, live_server, back_cache_page, browser_console_errors
):
    """The file page's "Request another file" loads the form afresh, with a new token."""
    query = factories.make_query(world.workspace, world.member, name="Hours")
    page = back_cache_page
    token = _open_request_form(page, live_server, world, query)
    first = request_file(page)

    page.get_by_role("link", name="Request another file").click()
    page.wait_for_url(re.compile(rf"/queries/{query.id}#request-title$"))
    assert page.locator("input[name=request_token]").input_value() != token
    second = request_file(page, ExportFile.id != first.id)

    assert (first.format, second.format) == ("csv", "csv")
    assert browser_console_errors == []


@pytest.mark.browser
def test_back_without_the_back_forward_cache_then_sending_again_shows_the_first_file(
    world, live_server, browser_page, browser_console_errors
):
    """A browser that loads the page again on Back (no back/forward cache) still shows the form it
    sent, so sending it again answers the first file."""
    query = factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    _open_request_form(page, live_server, world, query)
    first = request_file(page)

    page.go_back()
    page.wait_for_url(f"{live_server}/w/{world.workspace.id}/queries/{query.id}")
    page.get_by_role("button", name="Request file").click()
    page.wait_for_url(re.compile(r"/files/\d+$"))

    assert fresh(select(ExportFile.id)).scalars().all() == [first.id]
    assert page.url.endswith(f"/files/{first.id}")
    assert browser_console_errors == []
