"""Every page of the console fits a laptop (1280 px), a phone (390 px) and WCAG's reflow width (320 px)
without scrolling sideways.

The document never grows wider than the window; a wide table scrolls inside its own
`.table-scroll` container instead. Each page is visited as a visitor (sign-in, email links,
error pages) and as an administrator who is Rhythm staff too (every workspace and staff page,
read from the url_map by tests/fixtures/pages.py), and saved as a screenshot under
/tmp/rhythm-screens/ for people to look at.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fixtures.browser import sign_in
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

SCREENS = Path("/tmp/rhythm-screens")
# The document's width, and the elements that reach past the window's right edge outside a
# container that scrolls on its own (the outermost such element of each branch, at most five).
MEASURE = """() => {
  const width = window.innerWidth;
  const past = [];
  for (const element of document.body.querySelectorAll("*")) {
    if (element.closest(".table-scroll") || element.getBoundingClientRect().right <= width + 0.5) continue;
    if (past.some(outer => outer.contains(element))) continue;
    past.push(element);
  }
  const describe = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\\s+/).join(".") : "") +
    " (right edge " + Math.round(e.getBoundingClientRect().right) + ")";
  return {document: document.documentElement.scrollWidth, window: width, past: past.slice(0, 5).map(describe)};
}"""


def _measure(page, url: str, name: str, wide: dict[str, str]) -> None:
    """Visit the page, save its screenshot as `name`, and note it in `wide` if it is wider than the window."""
    visit(page, url)
    page.screenshot(path=str(SCREENS / f"{re.sub(r'[^A-Za-z0-9_.]+', '-', name)}.png"), full_page=True)
    found = page.evaluate(MEASURE)
    if found["document"] > found["window"]:
        wide[url] = f"{found['document']} px wide in a {found['window']} px window: " + ", ".join(found["past"])


@pytest.mark.parametrize("label", WIDTHS)
def test_no_page_is_wider_than_the_window(app, live_server, browser_page, world, label):
    width, height = WIDTHS[label]
    SCREENS.mkdir(exist_ok=True)
    values = page_path_values(world)
    page = browser_page
    page.set_viewport_size({"width": width, "height": height})
    wide: dict[str, str] = {}
    visited: list[str] = []

    for route in PAGE_ROUTES:
        if route.endpoint in SIGNED_OUT_ENDPOINTS:
            url = page_url(app, live_server, route, values)
            _measure(page, url, f"{label}-visitor-{route.endpoint}", wide)
            visited.append(url)
    for path in ERROR_PAGES:
        _measure(page, live_server + path.format(**values), f"{label}-visitor-{path}", wide)

    sign_in(page, live_server, world.admin.email, lands_on=r"/$")
    for route in PAGE_ROUTES:
        url = page_url(app, live_server, route, values)
        if route.endpoint not in SIGNED_OUT_ENDPOINTS and is_page(page, url):
            _measure(page, url, f"{label}-{route.endpoint}", wide)
            visited.append(url)
    for path in (*ERROR_PAGES, *MORE_PAGES):
        _measure(page, live_server + path.format(**values), f"{label}-{path}", wide)

    assert wide == {}, f"Pages wider than a {width} px window:\n" + "\n".join(f"{u}\n  {w}" for u, w in wide.items())
    # The page kinds that matter most were among those measured, so a filter gone wrong cannot pass empty.
    workspace = f"{live_server}/w/{values['workspace_id']}"
    expected = {
        f"{workspace}/files/",
        f"{workspace}/files/{values['file_id']}",
        f"{workspace}/export/packages/{values['package_id']}",
        f"{live_server}/staff/deliveries",
        f"{live_server}/staff/packages/{values['package_id']}",
        f"{live_server}/login",
    }
    assert expected <= set(visited), sorted(expected - set(visited))
