"""axe-core on every page of the console, on a laptop, a phone and at 320 px: no violation of WCAG
2.1's A and AA rules anywhere, whatever its impact, a file's page in every state included.

The pages are the app's GET routes, read from its url_map, so a page added later (the workspace
export pages, say) is checked without touching this test. Each route's path arguments are filled
from a workspace like the demo's, seen by its administrator (who sees every page); a route with
an argument this test has no value for fails, naming it. A GET route that answers with something
other than a whole HTML document (a download, an htmx fragment, JSON) is not a page: its
fragments are checked inside the pages that load them.
"""

from __future__ import annotations

import pytest

from tests.fixtures.browser import EVERY_IMPACT, WCAG21_AA_TAGS, accessibility_violations, sign_in
from tests.fixtures.pages import (
    ERROR_PAGES,
    MORE_PAGES,
    PAGE_ROUTES,
    SIGNED_OUT_ENDPOINTS,
    WIDTHS,
    is_page,
    page_path_values,
    page_url,
    visit,
)

pytestmark = pytest.mark.browser


def _check(page, url: str, found: dict[str, list[str]]) -> None:
    visit(page, url)
    violations = accessibility_violations(page, impacts=EVERY_IMPACT, tags=WCAG21_AA_TAGS)
    if violations:
        found[url] = violations


def _report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{url}\n  " + "\n  ".join(lines) for url, lines in found.items())


@pytest.mark.parametrize("label", WIDTHS)
def test_every_page_has_no_wcag_violation(app, live_server, browser_page, world, label):
    """Signed out (sign-in, email link pages), signed in (every GET page), error pages: no violation."""
    width, height = WIDTHS[label]
    browser_page.set_viewport_size({"width": width, "height": height})
    values = page_path_values(world)
    found: dict[str, list[str]] = {}
    checked: list[str] = []

    for route in PAGE_ROUTES:
        if route.endpoint in SIGNED_OUT_ENDPOINTS:
            url = page_url(app, live_server, route, values)
            _check(browser_page, url, found)
            checked.append(url)
    for path in ERROR_PAGES:
        _check(browser_page, live_server + path.format(**values), found)

    sign_in(browser_page, live_server, world.admin.email, lands_on=r"/$")
    for route in PAGE_ROUTES:
        url = page_url(app, live_server, route, values)
        if is_page(browser_page, url):
            _check(browser_page, url, found)
            checked.append(url)
    for path in ERROR_PAGES:
        _check(browser_page, live_server + path.format(**values), found)
    for path in MORE_PAGES:
        url = live_server + path.format(**values)
        assert browser_page.request.get(url).status == 200, url
        _check(browser_page, url, found)

    assert found == {}, f"axe-core found violations at {width} px:\n{_report(found)}"
    # The pages that matter most were among those checked, so a filter gone wrong cannot pass empty.
    file_page = f"{live_server}/w/{values['workspace_id']}/files/{values['file_id']}"
    assert {file_page, f"{live_server}/login"} <= set(checked)
