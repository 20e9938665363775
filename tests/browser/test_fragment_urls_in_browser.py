"""Every URL answers a whole page to a browser: a fragment route (the piece of a page htmx polls or
loads, app/blueprints/fragments.py) opened directly, as a new tab, a bookmark or a link shared in
chat would open it, shows the page it belongs to, with the header and the navigation.

The fragment routes are the app's GET routes marked `@fragment_of(page)`, read from its url_map,
so a fragment route added later is opened too; their path arguments are filled from a workspace
like the demo's, seen by its administrator, who is Rhythm staff too (tests/fixtures/pages.py).
"""

from __future__ import annotations

import pytest

from tests.fixtures.browser import sign_in
from tests.fixtures.pages import page_path_values, page_url
from tests.fixtures.routes import Route, collect_routes

pytestmark = pytest.mark.browser

FRAGMENT_ROUTES = [route for route in collect_routes() if route.method == "GET" and route.fragment_of]
# The navigation a page of the console carries: the workspace's sections, or the staff console's.
NAVIGATION = 'nav[aria-label="Workspace"], nav[aria-label="Staff"]'


def _page_of(route: Route) -> Route:
    return next(page for page in collect_routes() if page.endpoint == route.fragment_of and page.method == "GET")


def test_the_polled_run_history_is_among_the_fragment_routes():
    assert "schedules.runs" in {route.endpoint for route in FRAGMENT_ROUTES}


def test_every_fragment_url_opened_without_htmx_shows_its_whole_page(app, live_server, browser_page, world):
    values = page_path_values(world)
    sign_in(browser_page, live_server, world.admin.email, lands_on=r"/$")
    bare = {}

    for route in FRAGMENT_ROUTES:
        browser_page.goto(page_url(app, live_server, route, values))
        shown = {
            "address": browser_page.url,
            "header": browser_page.get_by_role("banner").get_by_role("link", name="Rhythm Exports").is_visible(),
            "navigation": browser_page.locator(NAVIGATION).first.is_visible(),
        }
        expected = {"address": page_url(app, live_server, _page_of(route), values), "header": True, "navigation": True}
        if shown != expected:
            bare[route.rule] = shown

    assert bare == {}
