"""The workspace export pages read at a glance in Chromium (issue 18, item 11): SHA-256 values on
one line with a Copy button, a running export's progress bar across its card, and destination
forms that show only what belongs to their kind, under the Content-Security-Policy."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_package import ExportVolume
from app.models.types import utcnow
from app.services.staff import staff_actions
from app.services.workspace_export import package_delivery
from tests import factories
from tests.fixtures.browser import sign_in

REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportCspViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""


@pytest.fixture
def watched_page(browser_page):
    """The browser page with every Content-Security-Policy violation it meets recorded."""
    violations: list[str] = []
    browser_page.context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    browser_page.add_init_script(REPORT_VIOLATIONS)
    browser_page.csp_violations = violations
    return browser_page


def _package_with_volume(world):
    factories.make_export_settings(world.workspace)
    execution = factories.make_execution(world.workspace, world.admin)
    package = factories.make_package(
        execution, volumes_count=1, manifest_sha256=hashlib.sha256(b"manifest").hexdigest()
    )
    volume = ExportVolume(
        execution_id=execution.id,
        attempt=1,
        dataset="teams",
        sequence=1,
        key=package.prefix + "teams-0001.csv.zip",
        status="complete",
        row_count=3,
        size_bytes=10,
        sha256=hashlib.sha256(b"volume").hexdigest(),
    )
    db.session.add(volume)
    db.session.commit()
    return package, volume


@pytest.mark.browser
def test_a_sha256_stays_on_one_line_and_its_copy_button_copies_it(
    world, live_server, watched_page, browser_console_errors
):
    package, volume = _package_with_volume(world)
    page = watched_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/packages/{package.id}")

    for code in (page.locator("#sha256-manifest"), page.locator(f"#sha256-volume-{volume.id}")):
        one_line = code.evaluate("element => parseFloat(getComputedStyle(element).lineHeight)")
        assert code.bounding_box()["height"] < 1.5 * one_line

    page.get_by_role("button", name="Copy the SHA-256 of teams-0001.csv.zip").click()
    page.locator("#volumes").get_by_role("status").filter(has_text="Copied.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == volume.sha256
    assert browser_console_errors == [] and page.csp_violations == []


@pytest.mark.browser
def test_a_running_exports_progress_bar_spans_its_card(world, live_server, watched_page, browser_console_errors):
    factories.make_export_settings(world.workspace)
    execution = factories.make_execution(world.workspace, world.admin)
    attempt = export_execution.start_attempt(execution.id, "worker-1", utcnow() + timedelta(minutes=5))
    export_execution.record_progress(execution.id, attempt, rows_expected=3000, rows_written=1000)
    page = watched_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/executions/{execution.id}")

    bar = page.get_by_role("progressbar", name="Rows written").bounding_box()
    card = page.locator("#execution-live section.card").first
    inner_width = card.evaluate(
        "element => element.clientWidth - parseFloat(getComputedStyle(element).paddingLeft)"
        " - parseFloat(getComputedStyle(element).paddingRight)"
    )
    assert bar["width"] >= inner_width - 1
    assert "rows per second" in page.locator("#rows-summary").text_content()
    assert browser_console_errors == [] and page.csp_violations == []


@pytest.mark.browser
def test_the_bucket_fields_show_only_while_a_bucket_is_chosen(
    world, live_server, watched_page, browser_console_errors, destinations_root
):
    factories.make_export_settings(world.workspace)
    page = watched_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/destinations")
    bucket = page.get_by_label("Bucket name")
    assert bucket.is_visible()

    page.get_by_label("Directory on this server").check()
    assert bucket.is_hidden() and page.get_by_label("Access key id").is_hidden()
    assert page.get_by_label("Destination path").is_visible()

    page.get_by_label("S3-compatible bucket").check()
    assert bucket.is_visible()
    assert browser_console_errors == [] and page.csp_violations == []


@pytest.mark.browser
def test_a_directory_destination_page_hides_the_bucket_fields_and_remove_asks_first(
    world, live_server, watched_page, browser_console_errors, destinations_root
):
    factories.make_export_settings(world.workspace)
    destination = factories.make_destination(world.workspace, name="Server folder", path="exports/rhythm")
    page = watched_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/destinations/{destination.id}")
    page.get_by_role("button", name="Test connection").click()
    page.locator("#test-result").get_by_text("DESTINATIONS_ROOT/exports/rhythm").wait_for()

    assert page.get_by_label("Bucket name").is_hidden()
    assert str(destinations_root) not in page.content()

    page.get_by_role("link", name="Remove").click()
    page.get_by_role("heading", name="Remove the destination Server folder?").wait_for()
    page.get_by_role("link", name="Keep it").click()
    page.get_by_role("heading", name="Server folder").wait_for()
    page.get_by_role("link", name="Remove").click()
    page.get_by_role("button", name="Remove the destination").click()
    page.get_by_text("Destination removed.").wait_for()
    assert browser_console_errors == [] and page.csp_violations == []


@pytest.mark.browser
def test_a_package_deleted_by_staff_says_who_deleted_it_and_why(world, live_server, browser_page):
    package, _ = _package_with_volume(world)
    staff = factories.make_person(name="Sam Okafor", is_staff=True, staff_permissions=["staff.view", "staff.execute"])
    staff_actions.delete_package(package, staff, "Customer asked support to remove it (ticket 4411)")
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/packages/{package.id}")

    facts = page.locator("#package-title + dl.facts")
    status = facts.locator("dt:text-is('Status') + dd").text_content() or ""
    assert "deleted" in status and "by Rhythm staff, before its retention deadline" in status
    assert "Sam Okafor" not in (facts.text_content() or "")
    reason = facts.locator("dt:text-is('Reason for the deletion') + dd")
    assert reason.text_content() == "Customer asked support to remove it (ticket 4411)"


@pytest.mark.browser
def test_a_failed_delivery_shows_on_the_overview_the_export_and_the_package_list(world, live_server, browser_page):
    package, _ = _package_with_volume(world)
    destination = factories.make_destination(world.workspace)
    factories.make_package_delivery(
        package, destination, status="failed", failure_class="permanent", failure_code="NoSuchBucket"
    )
    page = browser_page
    sign_in(page, live_server, world.admin.email)

    page.goto(f"{live_server}/w/{world.workspace.id}/")
    attention = page.locator("#attention")
    assert "Nothing needs your attention" not in (attention.text_content() or "")
    assert attention.locator("#failed-deliveries li").text_content().split()[:5] == [
        "Package",
        str(package.id),
        "1",
        "delivery",
        "failed",
    ]

    page.goto(f"{live_server}/w/{world.workspace.id}/export/executions/{package.execution_id}")
    assert page.locator("#failed-deliveries").text_content() == "1 delivery failed"

    page.goto(f"{live_server}/w/{world.workspace.id}/export/packages")
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=f"Package {package.id}", exact=True))
    assert "1 delivery failed" in (row.text_content() or "")


@pytest.mark.browser
def test_the_package_pages_say_datasets_formats_and_deliveries_in_words(world, live_server, browser_page):
    factories.make_export_settings(world.workspace)
    execution = factories.make_execution(world.workspace, world.admin)
    package = factories.make_package(execution, format="parquet", volumes_count=1)
    db.session.add(
        ExportVolume(
            execution_id=execution.id,
            attempt=1,
            dataset="time_off_requests",
            sequence=1,
            key=package.prefix + "time_off_requests-0001.parquet",
            status="complete",
            row_count=3,
            size_bytes=10,
            sha256="0" * 64,
        )
    )
    delivered_to = factories.make_destination(world.workspace, name="Finance archive")
    factories.make_package_delivery(
        package,
        delivered_to,
        status="delivered",
        location=f"DESTINATIONS_ROOT/finance/{package_delivery.package_folder(package)}",
        delivered_at=utcnow(),
    )
    refused = factories.make_destination(world.workspace, name="Old bucket")
    factories.make_package_delivery(
        package,
        refused,
        status="failed",
        failure_class="permanent",
        failure_code="NoSuchBucket",
        failure_summary="NoSuchBucket: The specified bucket does not exist",
    )
    page = browser_page
    sign_in(page, live_server, world.admin.email)

    page.goto(f"{live_server}/w/{world.workspace.id}/export/packages/{package.id}")
    first_dataset = page.locator("section[aria-labelledby=datasets-title] table tbody td").first
    assert first_dataset.text_content() == "Time-off requests"
    deliveries = page.locator("#deliveries").text_content() or ""
    assert f"Finance archive, in the folder {package_delivery.package_folder(package)}" in " ".join(deliveries.split())
    assert "DESTINATIONS_ROOT" not in deliveries
    assert "permanent" not in deliveries and "NoSuchBucket NoSuchBucket" not in deliveries
    assert "The copy failed and is not tried again on its own" in deliveries

    page.goto(f"{live_server}/w/{world.workspace.id}/export/packages")
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=f"Package {package.id}", exact=True))
    assert "Parquet" in (row.text_content() or "") and "PARQUET" not in (row.text_content() or "")
