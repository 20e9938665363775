"""The long forms' sticky Save/Preview bar never hides the control that has focus (WCAG 2.4.11):
Tab through every stop of the query and report forms, on a laptop and at 200 % zoom (a 640 px
wide window), and each focused control is at least partly visible above the bar."""

from __future__ import annotations

import pytest

from tests import factories
from tests.fixtures.browser import sign_in

pytestmark = pytest.mark.browser

# A laptop, and the same laptop at 200 % zoom (half as many CSS pixels each way).
VIEWPORTS = {"laptop": (1280, 800), "zoom-200": (640, 400)}
# More stops than any of the forms has.
MAX_TABS = 150
# The focused element, whether it sits in the bar, and how far its top is above the bar's top.
FOCUSED_CLEARANCE = """() => {
  const focused = document.activeElement;
  const bar = document.querySelector(".sticky-actions");
  const name = (focused.getAttribute("aria-label") || focused.name || focused.textContent || "").trim().slice(0, 40);
  return {
    tag: focused.tagName, name: name, in_bar: bar.contains(focused),
    clearance: bar.getBoundingClientRect().top - focused.getBoundingClientRect().top,
  };
}"""


def covered_stops(page, url: str) -> list[str]:
    """Tab from the top of the page to its end; the focus stops the sticky bar covered."""
    page.goto(url)
    page.wait_for_load_state()
    covered: list[str] = []
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED_CLEARANCE)
        if focused["tag"] == "BODY":
            break
        if not focused["in_bar"] and focused["clearance"] <= 0:
            covered.append(f"{focused['tag']} {focused['name']!r} ({focused['clearance']:.0f} px)")
    return covered


@pytest.mark.parametrize("label", VIEWPORTS)
def test_no_focus_stop_of_the_long_forms_hides_under_the_sticky_bar(world, live_server, browser_page, label):
    query = factories.make_query(world.workspace, world.admin, name="Hours")
    width, height = VIEWPORTS[label]
    page = browser_page
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server, world.admin.email)
    workspace = f"{live_server}/w/{world.workspace.id}"

    found = {
        path: covered_stops(page, f"{workspace}/{path}")
        for path in ("queries/new", f"queries/{query.id}/edit", "reports/new")
    }

    assert found == {path: [] for path in found}
