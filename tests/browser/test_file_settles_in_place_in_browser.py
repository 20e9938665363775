"""A file that settles while its page is open shows its outcome in place: no reload throws a
keyboard user back to the top, focus stays where it was, the page's status line (its one live
region) says the file is ready, and one update draws every fact (rows, size, times) with the
Download link; nothing on the page still says "queued"."""

from __future__ import annotations

import pytest

from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from tests.fixtures.browser import sign_in

EXPORT_TIMEOUT_MS = 60_000
# The file card's facts, label to value.
FACT_VALUES = """() => Object.fromEntries([...document.querySelectorAll("#file-live dt")].map(
  dt => [dt.textContent.trim(), dt.nextElementSibling.textContent.trim()]))"""


def fact_values(page) -> dict[str, str]:
    return page.evaluate(FACT_VALUES)


@pytest.mark.browser
def test_a_file_that_succeeds_while_watched_shows_its_download_link_without_a_reload(
    export_scenario, isolated_storage, start_worker, live_server, browser_page, browser_console_errors
):
    export_scenario.add_timesheet_rows(20)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    page = browser_page
    sign_in(page, live_server, export_scenario.requester.email)
    page.goto(f"{live_server}/w/{export_scenario.workspace.id}/files/{export.id}")
    assert page.locator(f"#progress-{export.id} .status").text_content() == "queued"
    # A reload would start a fresh window without the marker.
    page.evaluate("window.__stillThisPage = true")
    page.get_by_role("link", name="Request another file").focus()

    start_worker()

    status = page.locator("#file-status")
    status.get_by_role("link", name=f"Download {export.file_name}").wait_for(timeout=EXPORT_TIMEOUT_MS)
    assert page.get_by_role("status").filter(has_text="The file is ready to download.").count() == 1
    assert status.locator(".status").text_content() == "succeeded"
    facts = fact_values(page)
    assert facts["Rows"] == "20"
    for fact in ("Size", "Started", "Completed", "Available until"):
        assert facts[fact] != "—", fact
    assert "queued" not in page.locator("main").inner_text()
    assert page.evaluate("window.__stillThisPage === true")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Request another file"
    assert page.get_by_role("link", name=f"Download {export.file_name}").count() == 1
    assert browser_console_errors == []
