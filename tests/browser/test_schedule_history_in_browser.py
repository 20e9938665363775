"""A schedule's run history in Chromium set to another zone than the schedule's: viewer_zone.js
tells the server the browser's zone and the page is drawn again in it, each time naming the
schedule's zone on hover; older runs fold their recipients; the pager brings the older runs; the
schedule pages fit a 390 px screen."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests import factories
from tests.fixtures.browser import accessibility_violations, sign_in

NEW_YORK_DAILY = {"kind": "daily", "time": "07:00", "zone": "America/New_York"}
# 12:00:05 UTC is 07:00:05 in New York (EST) and 21:00:05 in Tokyo (JST).
OCCURRENCE = datetime(2026, 12, 1, 12, 0, 5, tzinfo=UTC)


@pytest.mark.browser
def test_the_run_history_is_in_the_browsers_zone_folds_older_runs_and_pages(world, live_server, browser_page):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, name="Tokyo view", timetable=NEW_YORK_DAILY)
    runs = [factories.make_run(schedule, occurrence_at=OCCURRENCE + timedelta(days=day)) for day in range(12)]
    for run in runs:
        factories.make_delivery(run, world.member)
    context = browser_page.context.browser.new_context(timezone_id="Asia/Tokyo")
    try:
        page = context.new_page()
        sign_in(page, live_server, world.member.email)
        page.goto(f"{live_server}/w/{world.workspace.id}/schedules/{schedule.id}")
        page.get_by_text("Times are in Asia/Tokyo (your browser's zone)").wait_for()

        newest = page.locator(f"#run-{runs[-1].id} h3")
        assert newest.text_content().startswith("Run 12 · 12 Dec 2026 21:00:05 JST")
        assert newest.locator("time").get_attribute("title") == "12 Dec 2026 07:00:05 EST in America/New_York"

        open_run, folded_run = page.locator(f"#run-{runs[-3].id}"), page.locator(f"#run-{runs[-4].id}")
        assert open_run.get_by_text("Recipients", exact=True).is_visible()
        assert not folded_run.get_by_text("Recipients", exact=True).is_visible()
        folded_run.get_by_text("Attempts (0) and recipients (1)").click()
        assert folded_run.get_by_text("Recipients", exact=True).is_visible()
        assert accessibility_violations(page) == []

        page.get_by_role("link", name="Next page").click()
        oldest = page.locator(f"#run-{runs[0].id} h3")
        oldest.wait_for()
        assert oldest.text_content().startswith("Run 1 · 1 Dec 2026 21:00:05 JST")
        assert page.locator("article.run").count() == 2
    finally:
        context.close()


@pytest.mark.browser
def test_the_schedule_form_and_page_fit_a_phone_screen(world, live_server, browser_page):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, timetable=NEW_YORK_DAILY)
    for day in range(4):
        run = factories.make_run(schedule, occurrence_at=OCCURRENCE + timedelta(days=day))
        factories.make_delivery(run, world.member)
    page = browser_page
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_server, world.member.email)
    for path in ("new", f"{schedule.id}/edit", f"{schedule.id}"):
        page.goto(f"{live_server}/w/{world.workspace.id}/schedules/{path}")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
