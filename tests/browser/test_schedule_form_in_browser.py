"""The schedule form in Chromium under the Content-Security-Policy: the browser's own time zone
reaches the live preview, the preview follows the timetable as it is typed, and a saved schedule's
"Run now" shows its run on the page, which polls while the run is queued."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.schedule import Schedule, ScheduleRun
from tests import factories
from tests.fixtures.browser import fresh, htmx_swap, sign_in

REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportCspViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""


@pytest.mark.browser
def test_the_schedule_form_previews_in_the_viewers_zone_and_run_now_shows_the_run(
    world, live_server, browser_page, browser_console_errors
):
    factories.make_query(world.workspace, world.member, name="Hours")
    # Without the browser's zone the preview would fall back to the workspace's: make them differ.
    world.workspace.time_zone = "Pacific/Chatham"
    db.session.commit()
    page = browser_page
    violations: list[str] = []
    page.context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    page.add_init_script(REPORT_VIOLATIONS)
    browser_zone = page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone")
    assert browser_zone != "Pacific/Chatham"
    sign_in(page, live_server, world.member.email)

    page.get_by_role("link", name="Schedules").click()
    page.get_by_role("link", name="New schedule").first.click()
    # viewer_zone.js fills the hidden field and asks for the preview again in the browser's zone.
    page.locator("#upcoming", has_text=f"In yours ({browser_zone})").wait_for()
    page.get_by_label("Name", exact=True).fill("Morning hours")
    page.get_by_label("Time zone").fill("America/New_York")
    htmx_swap(page, lambda: page.get_by_label("How often").select_option("hourly"))
    htmx_swap(page, lambda: page.get_by_label("Minute past the hour").fill("15"))
    page.locator("#upcoming", has_text="Every hour at 15 minutes past the hour (America/New_York)").wait_for()
    assert page.locator("#upcoming tbody tr").count() == 5
    page.get_by_role("button", name="Save schedule").click()
    page.wait_for_url(re.compile(r"/schedules/\d+$"))
    schedule = fresh(select(Schedule)).scalar_one()
    assert schedule.timetable == {"kind": "hourly", "minute": 15, "zone": "America/New_York"}
    assert [r.person_id for r in schedule.recipients] == [world.member.id]

    with page.expect_request(re.compile(rf"/schedules/{schedule.id}/runs$")):
        page.get_by_role("button", name="Run now").click()
    run = fresh(select(ScheduleRun)).scalar_one()
    assert run.trigger == "manual"
    assert page.locator(f"#run-{run.id} .status").text_content() == "queued"
    assert violations == []
    assert browser_console_errors == []
