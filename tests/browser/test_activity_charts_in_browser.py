"""The activity charts draw in Chromium from Chart.js served by the product, under the CSP."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.models.types import utcnow
from tests import factories
from tests.fixtures.browser import sign_in

pytestmark = pytest.mark.browser


def test_each_chart_is_drawn_with_a_line_per_outcome(browser_page, live_server, world, browser_console_errors):
    query = factories.make_query(world.workspace, world.admin)
    for days_ago in (0, 2, 2):
        factories.make_export(
            query,
            world.admin,
            status="failed",
            failure_code="internal",
            requested_at=utcnow() - timedelta(days=days_ago),
        )
    sign_in(browser_page, live_server, world.admin.email)
    browser_page.goto(f"{live_server}/w/{world.workspace.id}/activity/")
    browser_page.wait_for_function("window.Chart && Object.keys(window.Chart.instances).length === 3")

    series = browser_page.evaluate(
        "Object.values(window.Chart.instances).map(c => c.data.datasets.map(d => [d.label, d.pointStyle]))"
    )
    assert series[0] == [["succeeded", "circle"], ["failed", "triangle"], ["in progress", "rect"]]
    failed = browser_page.evaluate("window.Chart.getChart('files-chart').data.datasets[1].data")
    assert failed[-1] == 1 and failed[-3] == 2
    assert browser_console_errors == []
