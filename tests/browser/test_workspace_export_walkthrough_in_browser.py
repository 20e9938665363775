"""Issue 10's walk-through in Chromium: an administrator configures the export settings and an S3
destination (moto's server, Test connection through htmx), presses Export now, watches the phases
until the package is ready, reads its checksums and its delivery to the bucket, and deletes the
package early. A real rq worker does the work."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.models.export_package import ExportPackage, ExportVolume
from app.models.package_delivery import ExportDelivery
from tests.fixtures.browser import fresh, htmx_swap, sign_in

pytestmark = pytest.mark.browser


def test_settings_a_destination_export_now_delivery_and_early_deletion(
    world, live_server, browser_page, browser_console_errors, rq_worker, s3_bucket, s3_account
):
    endpoint, bucket = s3_bucket
    page = browser_page
    sign_in(page, live_server, world.admin.email)

    page.goto(f"{live_server}/w/{world.workspace.id}/export/settings")
    page.get_by_label("Keep packages for, in days").fill("3")
    page.get_by_role("button", name="Save settings").click()
    page.get_by_text("Export settings saved (version 1).").wait_for()

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
    htmx_swap(page, lambda: page.get_by_role("button", name="Test connection").click())
    page.locator("#test-result", has_text="Connected.").wait_for()

    page.goto(f"{live_server}/w/{world.workspace.id}/export/")
    page.get_by_role("button", name="Export now").click()
    page.wait_for_url(re.compile(r"/export/executions/\d+$"))
    page.locator("#execution-status .status-succeeded").wait_for(timeout=120_000)
    for phase in ("snapshot", "writing", "uploading", "delivering", "notifying"):
        assert page.get_by_text(f"Phase {phase} started.").count() >= 1, phase

    page.get_by_role("link", name=re.compile(r"^Package \d+$")).click()
    package = fresh(select(ExportPackage)).scalar_one()
    for volume in fresh(select(ExportVolume).where(ExportVolume.key.startswith(package.prefix))).scalars():
        page.locator("#volumes").get_by_text(volume.sha256).wait_for()
    delivery = fresh(select(ExportDelivery)).scalar_one()
    assert delivery.status == "delivered", delivery.failure_summary
    article = page.locator(f"#delivery-{delivery.id}")
    article.locator(".status-delivered").wait_for()
    assert article.locator("tbody tr").count() == 1  # attempt 1, delivered
    delivered = s3_account.client.list_objects_v2(Bucket=bucket, Prefix="rhythm/exports/")["Contents"]
    assert any(item["Key"].endswith("/manifest.json") for item in delivered)

    page.get_by_role("link", name="Delete now").click()
    page.get_by_label("I understand the package's files are removed for good").check()
    page.get_by_role("button", name="Delete the package").click()
    page.get_by_text("The package was deleted.").wait_for()
    assert fresh(select(ExportPackage.status)).scalar_one() == "deleted"
    assert browser_console_errors == []
