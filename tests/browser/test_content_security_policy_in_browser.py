"""The main pages work in Chromium under the Content-Security-Policy, and break none of it.

Every `securitypolicyviolation` event and every console message about the policy is collected
while a signed-in member walks the pages: overview, queries (list, page with its htmx preview,
builder with an htmx change), reports (list, table and summary pages with their htmx previews,
whose widths come from app/static), files (list and a page polling its progress) and the
password page. The server is the real app over HTTP, CSRF on, with the headers it sends anywhere.
"""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models import Report
from tests import factories
from tests.fixtures.browser import htmx_swap, sign_in

REPORT_COLUMNS = [{"name": "id", "width": 12}, {"name": "person_name", "width": 45}, {"name": "hours", "width": None}]
# Runs in every document the page loads, before the page's own scripts.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  const blocked = event.blockedURI || "inline";
  window.reportCspViolation(`${event.violatedDirective} blocked ${blocked} at ${event.documentURI}`);
});
"""


def _report(world, query, kind: str, **values) -> Report:
    report = Report(
        workspace_id=world.workspace.id,
        owner_id=world.member.id,
        name=f"{kind.title()} report",
        kind=kind,
        source_query_id=query.id,
        columns=REPORT_COLUMNS if kind != "summary" else [],
        code_column=None,
        code_descriptions={},
        summary=values.get("summary", {}),
        title="Hours",
        subtitle=None,
        page_size="A4",
        orientation="portrait",
        show_filters=True,
        show_generated_at=True,
    )
    db.session.add(report)
    db.session.commit()
    return report


@pytest.mark.browser
def test_main_pages_report_no_policy_violation(world, live_server, browser_page, browser_console_errors):
    """No violation on any main page, and the parts the policy could break still work: htmx swaps and widths."""
    query = factories.make_query(world.workspace, world.member, name="Hours")
    table = _report(world, query, "table")
    summary = _report(
        world,
        query,
        "summary",
        summary={"group_column": "team_name", "figures": [{"function": "sum", "column": "hours", "label": "Hours"}]},
    )
    export = factories.make_export(query, world.member)
    violations: list[str] = []
    page = browser_page
    page.context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    page.add_init_script(REPORT_VIOLATIONS)
    page.on(
        "console",
        lambda message: "Content Security Policy" in message.text and violations.append(f"console: {message.text}"),
    )
    workspace = f"{live_server}/w/{world.workspace.id}"
    page.on(
        "response",
        lambda response: (
            response.request.resource_type == "document"
            and "content-security-policy" not in response.headers
            and violations.append(f"no policy on {response.url}")
        ),
    )

    sign_in(page, live_server, world.member.email)
    page.goto(f"{workspace}/queries/")
    page.goto(f"{workspace}/queries/{query.id}")
    page.locator("#preview table").wait_for()
    page.goto(f"{workspace}/queries/new")
    htmx_swap(page, lambda: page.locator('select[name="dataset"]').select_option("timesheet_entries"))
    page.goto(f"{workspace}/reports/")
    page.goto(f"{workspace}/reports/{table.id}")
    id_heading = page.locator("table.report-table th", has_text="Entry ID")
    id_heading.wait_for()
    assert id_heading.evaluate("element => element.style.width") == "12%"
    page.goto(f"{workspace}/reports/{summary.id}")
    page.locator("table.report-chart .bar").first.wait_for()
    bar_widths = page.locator("table.report-chart .bar").evaluate_all("bars => bars.map(bar => bar.style.width)")
    assert bar_widths and all(width.endswith("%") for width in bar_widths)
    page.goto(f"{workspace}/reports/new")
    page.goto(f"{workspace}/files/")
    page.goto(f"{workspace}/files/{export.id}")
    assert page.get_by_role("progressbar", name=f"Progress of {export.source_name}").is_visible()
    page.wait_for_event("request", lambda request: "/progress" in request.url)
    page.goto(f"{live_server}/account/password")
    page.get_by_label("Current password").wait_for()

    assert violations == []
    assert browser_console_errors == []
