"""Workspace export settings and an S3 destination configured in Chromium under the
Content-Security-Policy, with "Test connection" answering through htmx from moto's S3 server."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.models.export_destination import ExportDestination
from app.models.export_settings import ExportSettings
from app.security.credentials import decrypt_secret
from tests.fixtures.browser import fresh, htmx_swap, sign_in

REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportCspViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""


@pytest.mark.browser
def test_an_administrator_configures_settings_and_an_s3_destination_and_tests_it(
    world, live_server, browser_page, browser_console_errors, s3_bucket, s3_account
):
    endpoint, bucket = s3_bucket
    page = browser_page
    violations: list[str] = []
    page.context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    page.add_init_script(REPORT_VIOLATIONS)
    sign_in(page, live_server, world.admin.email)

    page.goto(f"{live_server}/w/{world.workspace.id}/export/settings")
    page.get_by_label("shifts").uncheck()
    page.get_by_label("JSON Lines, zipped").check()
    page.get_by_label("Volume size in MB").fill("128")
    page.get_by_label("Keep packages for, in days").fill("10")
    page.get_by_label("Cadence", exact=True).select_option("weekly")
    page.locator("#cadence_time").fill("04:15")
    page.get_by_label("Day of the week").select_option(label="Friday")
    page.get_by_label("People of this workspace").select_option(str(world.member.id))
    page.get_by_role("button", name="Save settings").click()
    page.get_by_text("Export settings saved (version 1).").wait_for()
    settings = fresh(select(ExportSettings)).scalar_one()
    assert (settings.format, settings.volume_size_mb, settings.retention_days, settings.cadence) == (
        "jsonl",
        128,
        10,
        "weekly",
    )
    assert "shifts" not in settings.datasets
    assert (settings.cadence_weekday, settings.notify_person_ids) == (4, [world.member.id])
    assert settings.next_cadence_at.weekday() == 4
    page.get_by_text("Every Friday at 04:15 (UTC)").wait_for()

    page.get_by_role("link", name="Destinations").click()
    page.get_by_label("Name", exact=True).fill("Moto bucket")
    page.get_by_label("Bucket name").fill(bucket)
    page.get_by_label("Region").fill("us-east-1")
    page.get_by_label("Endpoint").fill(endpoint)
    page.get_by_label("Access key id").fill(s3_account.access_key_id)
    page.get_by_label("Secret access key").fill(s3_account.secret)
    page.get_by_label("Destination path").fill("rhythm/exports")
    page.get_by_role("button", name="Add destination").click()
    page.wait_for_url(re.compile(r"/export/destinations/\d+$"))
    destination = fresh(select(ExportDestination)).scalar_one()
    assert decrypt_secret(destination.secret_ciphertext) == s3_account.secret
    assert s3_account.secret not in page.content()
    page.get_by_text("Not tested yet.").wait_for()

    htmx_swap(page, lambda: page.get_by_role("button", name="Test connection").click())
    page.locator("#test-result", has_text="Connected.").wait_for()
    assert "rhythm/exports" in page.locator("#test-result").text_content()
    assert fresh(select(ExportDestination.last_test_ok)).scalar_one() is True
    assert violations == []
    assert browser_console_errors == []
