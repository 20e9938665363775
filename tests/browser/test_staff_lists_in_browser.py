"""The staff console's lists in a real browser: their filters stay apart on a laptop and on a phone."""

from __future__ import annotations

import pytest

from tests import factories
from tests.fixtures.browser import sign_in

pytestmark = pytest.mark.browser

# Whether rectangle a and rectangle b share any area.
OVERLAP = (
    "([a, b]) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5"
)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_deliveries_filters_do_not_overlap(live_server, browser_page, world, width):
    """Every filter's field stays inside its own label's box, and no two filters share any area."""
    world.admin.is_staff, world.admin.staff_permissions = True, ["staff.view"]
    execution = factories.make_execution(world.workspace, world.admin)
    factories.make_package_delivery(factories.make_package(execution), factories.make_destination(world.workspace))
    page = browser_page
    page.set_viewport_size({"width": width, "height": 800})
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/staff/deliveries")

    boxes = page.locator("form.filters > label").evaluate_all(
        """labels => labels.map(label => {
          const own = label.getBoundingClientRect();
          const field = label.querySelector("input, select").getBoundingClientRect();
          const box = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
          return {name: label.textContent.trim().split("\\n")[0], label: box(own), field: box(field)};
        })"""
    )
    assert [box["name"] for box in boxes] == ["Workspace", "Status", "Failure code", "From", "To"]
    for box in boxes:
        label, field = box["label"], box["field"]
        assert label["left"] <= field["left"] and field["right"] <= label["right"] + 0.5, f"{box['name']} sticks out"
    for index, first in enumerate(boxes):
        for second in boxes[index + 1 :]:
            assert not page.evaluate(OVERLAP, [first["label"], second["label"]]), f"{first['name']} / {second['name']}"
