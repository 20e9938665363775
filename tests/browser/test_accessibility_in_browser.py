"""axe-core on every page of the console: no serious or critical violation anywhere.

The pages are the app's GET routes, read from its url_map, so a page added later (the workspace
export pages, say) is checked without touching this test. Each route's path arguments are filled
from a workspace like the demo's, seen by its administrator (who sees every page); a route with
an argument this test has no value for fails, naming it. A GET route that answers with something
other than a whole HTML document (a download, an htmx fragment, JSON) is not a page: its
fragments are checked inside the pages that load them.
"""

from __future__ import annotations

import pytest

from app.domain import export_file
from app.domain.access import current_context
from app.extensions import db
from app.services import audit, audit_log, list_pages
from app.services.delivery_links import link_token
from app.storage import get_storage
from tests import factories
from tests.fixtures.browser import accessibility_violations, sign_in
from tests.fixtures.routes import Route, collect_routes

pytestmark = pytest.mark.browser

PAGE_ROUTES = [route for route in collect_routes() if route.method == "GET"]
# Pages a visitor sees before signing in; checked signed out (signed in, /login sends onwards).
SIGNED_OUT_ENDPOINTS = ("auth.login", "delivery.unsubscribe")
# Addresses that answer with the error page: a record that is not there, a link that is forged.
ERROR_PAGES = ("/w/{workspace_id}/queries/999999", "/no-such-page", "/u/forged-token")
# Pages of records no route argument reaches: a file of the audit log (its own source and filters).
MORE_PAGES = ("/w/{workspace_id}/files/{audit_file_id}",)


def _path_values(world) -> dict[str, int | str]:
    """A value for each path argument: records of the admin's workspace, in the states a newcomer meets."""
    workspace, admin = world.workspace, world.admin
    factories.make_member(world.other_workspace, role="admin", person=admin)  # so the header has a switcher
    # Rhythm staff too, so the staff console's pages are checked with the rest.
    admin.is_staff, admin.staff_permissions = True, ["staff.view", "staff.execute"]
    query = factories.make_query(workspace, admin, name="Hours by team this month")
    report = factories.make_report(query, admin, name="Weekly hours", title="Weekly hours")
    succeeded = factories.make_export(query, admin)
    attempt = export_file.start(succeeded.id)
    get_storage().put_bytes(succeeded.storage_key, b"id,hours\n1,7.5\n")
    export_file.succeed(succeeded.id, attempt, size_bytes=15, row_count=1, retention_days=30)
    failed = factories.make_export(query, admin)
    export_file.fail(failed.id, export_file.start(failed.id), export_file.FailureCode.TIMEOUT, "stopped after 600 s")
    running = factories.make_export(query, admin)
    export_file.record_progress(running.id, export_file.start(running.id), rows_written=400, rows_total=1000)
    schedule = factories.make_schedule(query, admin, name="Monday hours")
    run = factories.make_run(schedule, succeeded)
    delivery = factories.make_delivery(run, person=admin)
    template = factories.make_template(workspace, admin, name="Weekly message")  # a draft, so it can be edited
    factories.make_export_settings(workspace)
    destination = factories.make_destination(workspace, name="Archive")
    execution = factories.make_execution(workspace, admin)
    package = factories.make_package(execution)
    package_delivery = factories.make_package_delivery(package, destination)
    audit.record(
        workspace_id=workspace.id,
        actor_id=admin.id,
        action="schedule.paused",
        subject_type="schedule",
        subject_id=schedule.id,
        reason="=Paused for the holidays",
    )
    db.session.commit()
    audit_file = audit_log.request_csv_file(
        current_context(workspace.id, admin.id),
        list_pages.read_request(audit_log.AUDIT_LIST, {"action": "schedule.paused"}),
        dispatch_now=False,
    )
    return {
        "workspace_id": workspace.id,
        "query_id": query.id,
        "report_id": report.id,
        "file_id": running.id,  # the page with the live progress bar
        "schedule_id": schedule.id,
        "template_id": template.id,
        "version_id": template.versions[0].id,
        "token": link_token(delivery.link_nonce, "unsubscribe"),
        "execution_id": execution.id,
        "package_id": package.id,
        "destination_id": destination.id,
        "delivery_id": package_delivery.id,
        "run_id": run.id,
        "kind": "deliveries",
        "audit_file_id": audit_file.id,
    }


def _url(app, base_url: str, route: Route, values: dict) -> str:
    unknown = route.arguments - values.keys()
    if unknown:
        pytest.fail(
            f"The accessibility test cannot build a URL for {route.endpoint} ({route.rule}): it has no value for "
            f"{sorted(unknown)}. Add one to _path_values in {__name__}.",
            pytrace=False,
        )
    path = app.url_map.bind("localhost").build(route.endpoint, {name: values[name] for name in route.arguments})
    return base_url + path


def _is_page(page, url: str) -> bool:
    """Whether the address answers with a whole HTML document (not a download, fragment or JSON)."""
    response = page.request.get(url, max_redirects=0)
    assert response.status != 500, f"{url} answered 500"
    if not response.headers.get("content-type", "").startswith("text/html"):
        return False
    return response.text().lstrip()[:15].lower() == "<!doctype html>"


def _check(page, url: str, found: dict[str, list[str]]) -> None:
    page.goto(url)
    # Wait for what htmx loads on arrival (previews) so the check sees the page as a person does.
    loads = page.locator('[hx-trigger="load"]').count()
    if loads:
        page.wait_for_function("n => window.__htmxSettled >= n", arg=loads)
    violations = accessibility_violations(page)
    if violations:
        found[url] = violations


def _report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{url}\n  " + "\n  ".join(lines) for url, lines in found.items())


def test_every_page_has_no_serious_accessibility_violation(app, live_server, browser_page, world):
    """Signed out (sign-in, email link pages), signed in (every GET page), error pages: no serious violation."""
    values = _path_values(world)
    found: dict[str, list[str]] = {}
    checked: list[str] = []

    for route in PAGE_ROUTES:
        if route.endpoint in SIGNED_OUT_ENDPOINTS:
            url = _url(app, live_server, route, values)
            _check(browser_page, url, found)
            checked.append(url)
    for path in ERROR_PAGES:
        _check(browser_page, live_server + path.format(**values), found)

    sign_in(browser_page, live_server, world.admin.email, lands_on=r"/$")
    for route in PAGE_ROUTES:
        url = _url(app, live_server, route, values)
        if _is_page(browser_page, url):
            _check(browser_page, url, found)
            checked.append(url)
    for path in ERROR_PAGES:
        _check(browser_page, live_server + path.format(**values), found)
    for path in MORE_PAGES:
        url = live_server + path.format(**values)
        assert browser_page.request.get(url).status == 200, url
        _check(browser_page, url, found)

    assert found == {}, f"axe-core found serious or critical violations:\n{_report(found)}"
    # The pages that matter most were among those checked, so a filter gone wrong cannot pass empty.
    file_page = f"{live_server}/w/{values['workspace_id']}/files/{values['file_id']}"
    assert {file_page, f"{live_server}/login"} <= set(checked)
