"""Export now in Chromium under the Content-Security-Policy: the execution page follows the
export through htmx polls until it settles, the package page shows its volumes with their
checksums and a volume downloads, and the package is deleted early."""

from __future__ import annotations

import hashlib
import re

import pytest
from sqlalchemy import select

from app.models.export_execution import ExportExecution
from app.models.export_package import ExportPackage, ExportVolume
from tests import factories
from tests.fixtures.browser import fresh, sign_in

REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportCspViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""


@pytest.mark.browser
def test_an_administrator_exports_watches_it_settle_downloads_a_volume_and_deletes_the_package(
    world, live_server, browser_page, browser_console_errors, rq_worker, tmp_path
):
    factories.make_export_settings(world.workspace)
    page = browser_page
    violations: list[str] = []
    page.context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    page.add_init_script(REPORT_VIOLATIONS)
    live_polls: list[str] = []
    page.on("request", lambda request: request.url.endswith("/live") and live_polls.append(request.url))
    sign_in(page, live_server, world.admin.email)

    page.goto(f"{live_server}/w/{world.workspace.id}/export/")
    page.get_by_text("0 of 10 exports used in the last 30 days").wait_for()
    page.get_by_role("button", name="Export now").click()
    page.wait_for_url(re.compile(r"/export/executions/\d+$"))
    assert page.get_by_role("progressbar", name="Rows written").count() == 1
    page.locator("#execution-status .status-succeeded").wait_for(timeout=120_000)
    execution = fresh(select(ExportExecution)).scalar_one()
    assert execution.status == "succeeded" and live_polls

    page.get_by_role("link", name=re.compile(r"^Package \d+$")).click()
    page.wait_for_url(re.compile(r"/export/packages/\d+$"))
    package = fresh(select(ExportPackage)).scalar_one()
    volume = fresh(select(ExportVolume).where(ExportVolume.key.startswith(package.prefix))).scalars().first()
    page.locator("#volumes").get_by_text(volume.sha256).wait_for()
    with page.expect_download() as download_info:
        page.get_by_role("link", name=volume.key.rsplit("/", 1)[-1]).click()
    saved = tmp_path / "volume.zip"
    download_info.value.save_as(saved)
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == volume.sha256

    page.get_by_role("link", name="Delete now").click()
    page.get_by_label("I understand the package's files are removed for good").check()
    page.get_by_role("button", name="Delete the package").click()
    page.get_by_text("The package was deleted.").wait_for()
    assert fresh(select(ExportPackage.status)).scalar_one() == "deleted"
    assert violations == []
    assert browser_console_errors == []
