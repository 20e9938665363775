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
    # Only the files chart has something to draw; the others say "Nothing yet".
    browser_page.wait_for_function("window.Chart && Object.keys(window.Chart.instances).length === 1")

    series = browser_page.evaluate(
        "Object.values(window.Chart.instances).map(c => c.data.datasets.map(d => [d.label, d.pointStyle]))"
    )
    assert series[0] == [["succeeded", "circle"], ["failed", "triangle"], ["in progress", "rect"]]
    failed = browser_page.evaluate("window.Chart.getChart('files-chart').data.datasets[1].data")
    assert failed[-1] == 1 and failed[-3] == 2
    assert browser_console_errors == []


def test_sizes_and_durations_get_axes_of_their_own_and_counts_whole_number_ticks(
    browser_page, live_server, world, browser_console_errors
):
    """A 2.5 MB package that took 95 s: MB on the left axis, seconds on the right; a day with 1
    and 2 files ticks 0, 1, 2, never 0.5."""
    query = factories.make_query(world.workspace, world.admin)
    for days_ago in (0, 2, 2):
        factories.make_export(query, world.admin, requested_at=utcnow() - timedelta(days=days_ago))
    started = utcnow() - timedelta(minutes=10)
    execution = factories.make_execution(
        world.workspace, started_at=started, completed_at=started + timedelta(seconds=95)
    )
    factories.make_package(execution, size_bytes=2_500_000)
    sign_in(browser_page, live_server, world.admin.email)
    browser_page.goto(f"{live_server}/w/{world.workspace.id}/activity/")
    browser_page.wait_for_function("window.Chart && Object.keys(window.Chart.instances).length === 2")

    axes = browser_page.evaluate(
        """(() => {
          const chart = window.Chart.getChart("packages-chart");
          return chart.data.datasets.map(d => {
            const scale = chart.scales[d.yAxisID];
            return [d.label, scale.position, scale.options.title.text, scale.max >= d.data[0]];
          });
        })()"""
    )
    ticks = browser_page.evaluate(
        """(() => {
          const chart = window.Chart.getChart("files-chart");
          return chart.scales[chart.data.datasets[0].yAxisID].ticks.map(t => t.value);
        })()"""
    )

    assert axes == [["size (MB)", "left", "Size (MB)", True], ["duration (s)", "right", "Duration (s)", True]]
    assert ticks and all(value == int(value) for value in ticks), ticks
    assert browser_console_errors == []
