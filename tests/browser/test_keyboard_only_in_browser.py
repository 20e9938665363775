"""Four tasks done with the keyboard alone, as a person without a mouse does them: request a file
of a saved query and download it, create a schedule, Export now then cancel the export, and build
a query (change its dataset, tick and move columns, add and remove filters and date ranges).

After sign-in nothing is clicked: Tab moves focus, Enter and Space act, text is typed. Once the
first Tab of a page has put focus on it, focus is never on BODY again, after any key and across
the page's live polls (WCAG 2.4.3)."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.models import ExportFile
from app.models.export_execution import ExportExecution
from app.models.schedule import Schedule
from tests import factories
from tests.fixtures.browser import fresh, sign_in

pytestmark = pytest.mark.browser

# Far more stops than any page of the console has: a page that needs more has lost its order.
MAX_TABS = 80
POLLS = 2
FILE_TIMEOUT_MS = 60_000
# The focused element's tag and accessible name as a screen reader would announce it.
FOCUSED = """() => {
  const e = document.activeElement;
  const labelled = e.getAttribute("aria-labelledby");
  const name = e.getAttribute("aria-label")
    || (labelled && document.getElementById(labelled)?.textContent)
    || (e.labels && e.labels.length ? e.labels[0].textContent : e.textContent) || "";
  return {tag: e.tagName, name: name.replace(/\\s+/g, " ").trim()};
}"""
# Every htmx swap notes where focus is once it has settled, so a poll that drops it is seen.
NOTE_FOCUS_AFTER_SWAPS = """() => {
  window.__focusAfterSwaps = [];
  document.addEventListener("htmx:afterSettle", () => window.__focusAfterSwaps.push(document.activeElement.tagName));
}"""


def press(page, key: str) -> dict[str, str]:
    """Press `key`; what has focus now, which is never the page's body."""
    page.keyboard.press(key)
    focused = page.evaluate(FOCUSED)
    assert focused["tag"] != "BODY", f"focus fell to BODY after {key}"
    return focused


def press_to_leave(page, key: str, url: str) -> None:
    """Press `key` on a link or submit button and wait for the page it leads to (`url`, a pattern);
    the new page starts without focus, until its first Tab."""
    with page.expect_navigation(url=re.compile(url)):
        page.keyboard.press(key)


def first_tab(page) -> None:
    """The first Tab of a freshly loaded page, after which its swaps are watched for dropped focus."""
    page.wait_for_load_state()
    press(page, "Tab")
    # Swaps before the first Tab (a preview loading on arrival) find focus on BODY rightly.
    page.evaluate(NOTE_FOCUS_AFTER_SWAPS)


def tab_to(page, name: str | re.Pattern[str], key: str = "Tab") -> None:
    """Press Tab (or `key`: Shift+Tab goes back) until the focused element's accessible name is
    `name` (or matches it)."""
    seen: list[str] = []
    for _ in range(MAX_TABS):
        focused = press(page, key)
        seen.append(focused["name"])
        if name.fullmatch(focused["name"]) if isinstance(name, re.Pattern) else focused["name"] == name:
            return
    pytest.fail(f"{MAX_TABS} Tabs never reached {name!r}; focus went through: {seen}")


def type_into(page, name: str, text: str) -> None:
    """Tab to the field named `name`, replace what it holds with `text`."""
    tab_to(page, name)
    press(page, "Control+A")
    page.keyboard.type(text)


def press_to_redraw(page, key: str) -> str:
    """Press `key` on a control that redraws part of the page through htmx; once the new part has
    settled, the id of the element focus is on, which is never BODY."""
    settled = page.evaluate("window.__htmxSettled")
    # Not `press`: between htmx's swap and its settle (20 ms on) the pressed control is gone and
    # focus is rightly nowhere; focus is judged once the new part has settled.
    page.keyboard.press(key)
    page.wait_for_function("n => window.__htmxSettled > n", arg=settled)
    assert page.evaluate(FOCUSED)["tag"] != "BODY", f"focus fell to BODY once {key} redrew the page"
    return page.evaluate("document.activeElement.id")


def wait_through_polls(page, count: int) -> None:
    """Wait until htmx has swapped `count` more answers in; focus stayed off BODY through each."""
    settled = page.evaluate("window.__htmxSettled")
    page.wait_for_function("n => window.__htmxSettled >= n", arg=settled + count, timeout=30_000)
    assert_focus_kept_across_swaps(page)
    assert len(page.evaluate("window.__focusAfterSwaps")) >= count


def assert_focus_kept_across_swaps(page) -> None:
    """No swap since the page's first Tab left focus on BODY, and focus is not there now."""
    swaps = page.evaluate("window.__focusAfterSwaps")
    assert swaps is not None, "the page reloaded itself, taking focus back to the top"
    assert "BODY" not in swaps
    assert page.evaluate(FOCUSED)["tag"] != "BODY"


def test_a_file_is_requested_and_downloaded_by_keyboard(
    world, live_server, browser_page, progress_polls, browser_console_errors, start_worker
):
    query = factories.make_query(world.workspace, world.admin, name="Hours")
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/{query.id}")

    first_tab(page)
    tab_to(page, "Request file")
    press_to_leave(page, "Enter", r".*/files/\d+$")
    export = fresh(select(ExportFile).where(ExportFile.source_query_id == query.id)).scalar_one()
    first_tab(page)
    polled = len(progress_polls)
    wait_through_polls(page, POLLS)
    assert len(progress_polls) >= polled + POLLS
    start_worker()
    page.locator(f"#progress-{export.id} .status-succeeded").wait_for(timeout=FILE_TIMEOUT_MS)
    assert_focus_kept_across_swaps(page)

    tab_to(page, f"Download {export.file_name}")
    with page.expect_download() as download_info:
        press(page, "Enter")
    assert download_info.value.failure() is None
    assert download_info.value.suggested_filename == export.file_name
    assert browser_console_errors == []


def test_a_schedule_is_created_by_keyboard(world, live_server, browser_page, browser_console_errors):
    factories.make_query(world.workspace, world.admin, name="Hours")
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/new")

    first_tab(page)
    type_into(page, "Name", "Morning hours")
    type_into(page, "Time (every day, chosen days, once a month; 24-hour clock, such as 07:30)", "07:30")
    page.locator("#upcoming", has_text="07:30").wait_for()
    assert_focus_kept_across_swaps(page)
    tab_to(page, re.compile(rf"{re.escape(world.admin.name)} .*"))
    press(page, "Space")
    tab_to(page, "Save schedule")
    press_to_leave(page, "Enter", r".*/schedules/\d+$")

    schedule = fresh(select(Schedule)).scalar_one()
    assert schedule.name == "Morning hours"
    assert schedule.timetable["kind"] == "daily" and schedule.timetable["time"] == "07:30"
    assert [recipient.person_id for recipient in schedule.recipients] == [world.admin.id]
    assert browser_console_errors == []


def test_an_export_is_started_and_cancelled_by_keyboard(world, live_server, browser_page, browser_console_errors):
    factories.make_export_settings(world.workspace)
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/")

    first_tab(page)
    tab_to(page, "Export now")
    press_to_leave(page, "Enter", r".*/export/executions/\d+$")
    first_tab(page)
    tab_to(page, "Cancel this export")
    wait_through_polls(page, POLLS)
    assert page.evaluate(FOCUSED)["name"] == "Cancel this export"
    press_to_leave(page, "Enter", r".*/export/executions/\d+$")

    assert fresh(select(ExportExecution.status)).scalar_one() == "cancelled"
    assert browser_console_errors == []


def test_a_query_is_built_by_keyboard(world, live_server, browser_page, browser_console_errors):
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/new")
    first_tab(page)

    # An arrow key on the dataset list chooses the next dataset; focus stays on the list.
    tab_to(page, "Dataset")
    assert press_to_redraw(page, "ArrowDown") == "dataset"
    assert page.locator("#dataset").input_value() == "people"
    # Ticking columns: focus stays on each tick box.
    tab_to(page, re.compile(r"Person ID .*"))
    assert press_to_redraw(page, "Space") == "column-id"
    tab_to(page, re.compile(r"Name text .*"))
    assert press_to_redraw(page, "Space") == "column-full_name"
    # A moved column's button goes with it; at an end, its other arrow takes focus.
    tab_to(page, "Move Name up")
    assert press_to_redraw(page, "Enter") == "move-down-full_name"
    assert press_to_redraw(page, "Enter") == "move-up-full_name"
    # A new filter's first field takes focus; a removed filter's place goes to the next one.
    tab_to(page, "Add a filter")
    assert press_to_redraw(page, "Enter") == "filters-0-column"
    tab_to(page, "Add a filter")
    assert press_to_redraw(page, "Enter") == "filters-1-column"
    tab_to(page, "Remove filter 1", key="Shift+Tab")
    assert press_to_redraw(page, "Enter") == "filters-0-column"
    tab_to(page, "Remove filter 1")
    assert press_to_redraw(page, "Enter") == "add-filter"
    # The same for date ranges.
    tab_to(page, "Add a date range")
    assert press_to_redraw(page, "Enter") == "parameters-0-column"
    tab_to(page, "Remove date range 1")
    assert press_to_redraw(page, "Enter") == "add-parameter"

    assert_focus_kept_across_swaps(page)
    assert browser_console_errors == []
