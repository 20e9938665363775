"""The query's file request form in Chromium: the descriptions row can be ticked for Excel only."""

from __future__ import annotations

import pytest

from tests import factories
from tests.fixtures.browser import sign_in


@pytest.mark.browser
def test_picking_csv_disables_the_descriptions_row_and_xlsx_enables_it(
    world, live_server, browser_page, browser_console_errors
):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/{query.id}")
    descriptions = page.get_by_label("Add a row of column descriptions under the headings")

    assert page.get_by_label("CSV").is_checked()
    assert descriptions.is_disabled()

    page.get_by_label("Excel (XLSX)").check()
    assert descriptions.is_enabled()
    descriptions.check()

    page.get_by_label("CSV").check()
    assert descriptions.is_disabled() and not descriptions.is_checked()
    assert browser_console_errors == []
