"""Issue 12's walk-through in Chromium: a staff member suspends a workspace's export with a reason,
its administrator sees it suspended and cannot export, staff resume it; the queue health page
shows a real worker."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.models import ExportExecution
from tests import factories
from tests.fixtures.browser import fresh, sign_in

pytestmark = pytest.mark.browser


def test_staff_suspend_the_administrator_is_refused_staff_resume(world, live_server, browser_page, rq_worker):
    factories.make_export_settings(world.workspace)
    staff = factories.make_person(name="Sam Okafor", is_staff=True, staff_permissions=["staff.view", "staff.execute"])
    page = browser_page

    sign_in(page, live_server, staff.email, lands_on=r"/staff/$")
    page.goto(f"{live_server}/staff/queues")
    page.locator("td", has_text="exports-").first.wait_for(timeout=30_000)
    page.goto(f"{live_server}/staff/workspaces/{world.workspace.id}")
    page.locator("#reason-suspend").fill("Invoice 2026-11 unpaid")
    page.get_by_role("button", name="Suspend export").click()
    page.get_by_text("The workspace's export is suspended.").wait_for()
    page.get_by_role("button", name="Sign out").click()

    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/settings")
    page.get_by_text("Invoice 2026-11 unpaid").first.wait_for()
    page.goto(f"{live_server}/w/{world.workspace.id}/export/")
    export_now = page.get_by_role("button", name="Export now")
    if export_now.count():
        export_now.click()
    page.get_by_text("Invoice 2026-11 unpaid").first.wait_for()
    assert fresh(select(ExportExecution)).all() == []
    page.get_by_role("button", name="Sign out").click()

    sign_in(page, live_server, staff.email, lands_on=r"/staff/$")
    page.goto(f"{live_server}/staff/workspaces/{world.workspace.id}")
    page.locator("#reason-resume").fill("Paid on 2026-12-01")
    page.get_by_role("button", name="Resume export").click()
    page.get_by_text("The workspace's export is resumed.").wait_for()
    page.get_by_role("button", name="Sign out").click()

    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/")
    page.get_by_role("button", name="Export now").click()
    page.wait_for_url("**/export/executions/*")
    assert len(fresh(select(ExportExecution)).all()) == 1
