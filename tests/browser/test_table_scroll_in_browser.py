"""Wide tables on a phone (390 px) scroll with the keyboard alone: the container a table scrolls
in is a tab stop, a region named for its table, and the arrow keys move it sideways."""

from __future__ import annotations

import pytest

from tests.fixtures.browser import accessibility_violations, sign_in
from tests.fixtures.pages import page_path_values, visit

PHONE = {"width": 390, "height": 844}
# Pages whose tables are wider than a phone: the query preview, the audit log, staff coverage.
WIDE_TABLE_PAGES = {
    "Query preview": "/w/{workspace_id}/queries/{query_id}",
    "Audit log": "/w/{workspace_id}/audit",
    "Coverage registry": "/staff/coverage",
}


@pytest.mark.browser
@pytest.mark.parametrize("label", WIDE_TABLE_PAGES)
def test_a_wide_table_scrolls_by_keyboard_on_a_phone(world, live_server, browser_page, label):
    values = page_path_values(world)
    page = browser_page
    page.set_viewport_size(PHONE)
    sign_in(page, live_server, world.admin.email, lands_on=r"/$")
    visit(page, live_server + WIDE_TABLE_PAGES[label].format(**values))
    region = page.get_by_role("region", name=label, exact=True)
    assert region.evaluate("r => r.classList.contains('table-scroll') && r.scrollWidth > r.clientWidth")

    region.focus()
    page.keyboard.press("ArrowRight")

    assert region.evaluate("r => document.activeElement === r")
    page.wait_for_function("r => r.scrollLeft > 0", arg=region.element_handle())
    assert accessibility_violations(page) == []


@pytest.mark.browser
def test_every_table_scroll_container_is_a_named_tab_stop(world, live_server, browser_page):
    values = page_path_values(world)
    page = browser_page
    page.set_viewport_size(PHONE)
    sign_in(page, live_server, world.admin.email, lands_on=r"/$")
    for url in ("/w/{workspace_id}/files", "/staff/", "/w/{workspace_id}/schedules/{schedule_id}"):
        visit(page, live_server + url.format(**values))
        containers = page.locator(".table-scroll")
        assert containers.count() > 0, url
        for index in range(containers.count()):
            container = containers.nth(index)
            assert container.get_attribute("tabindex") == "0", url
            assert container.get_attribute("role") == "region", url
            assert container.get_attribute("aria-label"), url
