"""Live regions stay in the page while htmx changes what is in them, so a screen reader announces
each change: the schedule form's next five runs, a schedule's run history, the Files list's
progress cells, a destination's "Test connection" outcome. And a poll that changed nothing
announces nothing: the file and export pages' polls leave their status line alone."""

from __future__ import annotations

import pytest

from tests import factories
from tests.fixtures.browser import htmx_swap, sign_in

# Marks the live region around `selector` (none if there is none), to tell later whether it is the same element.
MARK_REGION = """selector => {
  const region = document.querySelector(selector).closest("[aria-live]");
  if (region) region.dataset.keptMark = "kept";
  return region !== null;
}"""
# Whether the live region around `selector` now is the one marked.
REGION_KEPT = """selector => {
  const region = document.querySelector(selector).closest("[aria-live]");
  return region !== null && region.dataset.keptMark === "kept" && region.getAttribute("aria-live") === "polite";
}"""


# Counts every change inside a live region (aria-live, or a role that is one) from now on.
COUNT_LIVE_INSERTIONS = """() => {
  window.__liveInsertions = 0;
  const live = '[aria-live]:not([aria-live="off"]), [role="status"], [role="alert"], [role="log"]';
  const inLive = n => { const e = n.nodeType === Node.ELEMENT_NODE ? n : n.parentElement; return !!e?.closest(live); };
  const holdsLive = n => n.nodeType === Node.ELEMENT_NODE && (n.matches(live) || !!n.querySelector(live));
  new MutationObserver(records => {
    for (const record of records) {
      if (inLive(record.target) || [...record.addedNodes].some(holdsLive)) window.__liveInsertions += 1;
    }
  }).observe(document.body, {childList: true, subtree: true, characterData: true});
}"""
UNCHANGED_FOR_MS = 10_000


def wait_for_polls(page, count: int) -> None:
    settled = page.evaluate("window.__htmxSettled")
    page.wait_for_function("n => window.__htmxSettled >= n", arg=settled + count, timeout=30_000)


@pytest.mark.browser
def test_the_next_five_runs_change_inside_a_region_that_stays(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/new")
    page.wait_for_function("() => window.__htmxSettled >= 1")  # viewer_zone.js asks once on arrival
    assert page.evaluate(MARK_REGION, "#upcoming")

    htmx_swap(page, lambda: page.locator("input[name=time]").fill("09:30"))

    page.locator("#upcoming", has_text="Every day at 09:30").wait_for()
    assert page.evaluate(REGION_KEPT, "#upcoming")


@pytest.mark.browser
def test_the_run_history_changes_inside_a_region_that_stays(world, live_server, browser_page):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    schedule = factories.make_schedule(query, world.member, name="Morning hours")
    factories.make_run(schedule, factories.make_export(query, world.member), status="running")
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/{schedule.id}")
    assert page.evaluate(MARK_REGION, "#runs")

    wait_for_polls(page, 2)

    assert page.evaluate(REGION_KEPT, "#runs")


@pytest.mark.browser
def test_a_files_progress_changes_inside_a_region_that_stays(world, live_server, browser_page, progress_polls):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    export = factories.make_export(query, world.member)
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/files")
    assert page.evaluate(MARK_REGION, f"#progress-{export.id}")

    wait_for_polls(page, 2)

    assert progress_polls
    assert page.evaluate(REGION_KEPT, f"#progress-{export.id}")


@pytest.mark.browser
def test_a_connection_test_s_outcome_changes_inside_a_status_region_that_stays(
    world, live_server, browser_page, destinations_root
):
    factories.make_export_settings(world.workspace)
    destination = factories.make_destination(world.workspace, name="Server folder", path="exports/rhythm")
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/destinations/{destination.id}")
    page.evaluate("() => { document.querySelector('#test-result').dataset.keptMark = 'kept'; }")

    page.get_by_role("button", name="Test connection").click()

    page.locator("#test-result", has_text="Connected.").wait_for()
    region = page.locator("#test-result")
    assert region.evaluate("r => [r.dataset.keptMark, r.getAttribute('role')]") == ["kept", "status"]


def count_live_insertions_while_unchanged(page) -> tuple[int, int]:
    """Live-region insertions, and polls, over 10 s of a page whose subject does not change."""
    page.evaluate(COUNT_LIVE_INSERTIONS)
    settled = page.evaluate("window.__htmxSettled")
    page.wait_for_timeout(UNCHANGED_FOR_MS)
    return page.evaluate("window.__liveInsertions"), page.evaluate("window.__htmxSettled") - settled


@pytest.mark.browser
def test_a_queued_file_s_page_announces_nothing_while_it_waits(world, live_server, browser_page):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    export = factories.make_export(query, world.member)
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/files/{export.id}")

    insertions, polls = count_live_insertions_while_unchanged(page)

    assert polls >= 4
    assert insertions <= 1


@pytest.mark.browser
def test_a_queued_export_s_page_announces_nothing_while_it_waits(world, live_server, browser_page):
    execution = factories.make_execution(world.workspace, world.admin)
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/executions/{execution.id}")

    insertions, polls = count_live_insertions_while_unchanged(page)

    assert polls >= 3
    assert insertions <= 1
