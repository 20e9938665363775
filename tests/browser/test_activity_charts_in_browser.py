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


# How far each canvas and each numbers table reaches past its card's right edge, and how much of each
# table its box hides below.
CHART_FIT = """() => [...document.querySelectorAll(".chart-card")].filter(c => c.querySelector("canvas")).map(card => {
  const right = card.getBoundingClientRect().right;
  const table = card.querySelector(".chart-table");
  return {
    title: card.querySelector("h2").textContent,
    canvas_past: card.querySelector("canvas").getBoundingClientRect().right - right,
    table_past: table.getBoundingClientRect().right - right,
    rows_hidden: table.scrollHeight - table.clientHeight,
  };
})"""


def test_the_charts_follow_the_window_down_to_a_phone_and_their_tables_show_every_row(
    browser_page, live_server, world, browser_console_errors
):
    """Drawn at 1280 px, then the window narrowed to 390 px (a resize, or 200 % zoom and more): each
    chart and its table stay inside their card, the page never scrolls sideways, and no numbers table
    hides a row in a box of its own (12 packages)."""
    query = factories.make_query(world.workspace, world.admin)
    for days_ago in (0, 2, 2):
        factories.make_export(query, world.admin, requested_at=utcnow() - timedelta(days=days_ago))
    for hours_ago in range(12):
        started = utcnow() - timedelta(hours=hours_ago + 1)
        execution = factories.make_execution(
            world.workspace, status="succeeded", started_at=started, completed_at=started + timedelta(seconds=95)
        )
        factories.make_package(execution, size_bytes=2_500_000 + hours_ago)
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/activity/")
    page.wait_for_function("window.Chart && Object.keys(window.Chart.instances).length === 2")
    assert all(card["rows_hidden"] <= 1 for card in page.evaluate(CHART_FIT)), page.evaluate(CHART_FIT)

    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(500)  # Chart.js redraws on its ResizeObserver's next frame

    fit = page.evaluate(CHART_FIT)
    assert all(card["canvas_past"] <= 0.5 and card["table_past"] <= 0.5 for card in fit), fit
    assert all(card["rows_hidden"] <= 1 for card in fit), fit
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert browser_console_errors == []
