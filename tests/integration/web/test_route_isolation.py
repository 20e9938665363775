"""Every route of the app, tried by people who must not get in: nothing leaks, nothing breaks.

The routes are read from the app's url_map when the tests are collected, so a route added
later is tried too. Its path arguments are filled with ids of workspace A (the admin's query,
succeeded file, report, schedule and message template); the intruders are an anonymous visitor,
a member of workspace B, a plain member of A (against the admin's file and schedule and the
template pages that change templates) and a member of A without the query's dataset. The public
pages behind an email's links take a signed token instead of a sign-in; they are tried with
forged tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from sqlalchemy import select

from app.domain.files import export_file
from app.extensions import db
from app.models import Report, SavedQuery
from app.models.export_notice import ExportNotice, NoticeKind
from app.services.workspace_export import export_notices
from app.storage import get_storage
from tests import factories
from tests.fixtures.routes import Route, collect_routes

QUERY_MARKER = "Leakcheck query QX7"
ROW_MARKER = "Leakcheck row RW9"
FILE_MARKER = b"Leakcheck file bytes FB3"
WORKSPACE_MARKER = "Leakcheck workspace WS5"
MARKERS = (QUERY_MARKER.encode(), ROW_MARKER.encode(), FILE_MARKER, WORKSPACE_MARKER.encode())

# Pages anyone may open; they are still checked for leaks and errors.
PUBLIC_ENDPOINTS = {"auth.login", "health.healthz", "health.readyz", "health.metrics"}
# Public on purpose: an email's download and unsubscribe links open with no sign-in, authorised
# by the signed token in the path alone (app/services/schedules/public_links.py).
TOKEN_ENDPOINTS = {"public_links.download", "public_links.unsubscribe"}
# Template pages that change templates: schedule authority only, 404 for a plain member.
TEMPLATE_MANAGEMENT_ENDPOINTS = {"templates.new", "templates.edit_draft", "templates.publish", "templates.new_version"}
FORGED_TOKENS = ["forged-token", "InVhbnl0aGluZyI.c2lnbmF0dXJl", "9" * 5000]


ROUTES = collect_routes()
# Ids of records that belong to one workspace; each route taking one is tried across workspaces.
WORKSPACE_RECORD_IDS = {
    "workspace_id",
    "query_id",
    "file_id",
    "report_id",
    "template_id",
    "schedule_id",
    "run_id",
    "execution_id",
    "package_id",
    "destination_id",
    "delivery_id",
    "notice_id",
}
# Workspace export and the audit log are for administrators: a plain member gets 404 from every page of them.
ADMIN_ONLY_BLUEPRINTS = ("export_settings.", "packages.", "audit.", "activity.")


def _cases(predicate) -> list:
    return [pytest.param(route, id=f"{route.method} {route.rule}") for route in ROUTES if predicate(route)]


@dataclass
class Intrusion:
    workspace_id: int
    other_workspace_id: int
    query_id: int
    file_id: int
    report_id: int
    template_id: int
    version_id: int
    schedule_id: int
    run_id: int
    execution_id: int
    package_id: int
    destination_id: int
    delivery_id: int
    notice_id: int
    admin_email: str
    plain_member_email: str
    outsider_email: str
    ungranted_email: str


@pytest.fixture
def intrusion(world) -> Intrusion:
    """Workspace A with the admin's marked query, marked data row and succeeded marked file."""
    world.workspace.name = WORKSPACE_MARKER
    db.session.commit()
    query = factories.make_query(world.workspace, world.admin, name=QUERY_MARKER)
    factories.make_timesheet_entry(world.employees[0], note=ROW_MARKER)
    export = factories.make_export(query, world.admin, source_name=QUERY_MARKER)
    attempt = export_file.start(export.id)
    get_storage().put_bytes(export.storage_key, FILE_MARKER)
    export_file.succeed(export.id, attempt, size_bytes=len(FILE_MARKER), row_count=1, retention_days=30)
    report = Report(
        workspace_id=world.workspace.id,
        owner_id=world.admin.id,
        name=QUERY_MARKER,
        kind="table",
        source_query_id=query.id,
        columns=[{"name": "note", "width": None}],
        title=QUERY_MARKER,
    )
    db.session.add(report)
    db.session.commit()
    template = factories.make_template(
        world.workspace, world.admin, published=True, name=QUERY_MARKER, subject=QUERY_MARKER, body=QUERY_MARKER
    )
    schedule = factories.make_schedule(query, world.admin, name=QUERY_MARKER, custom_message=ROW_MARKER)
    ungranted = factories.make_member(world.workspace, dataset_grants=["people"]).person
    factories.make_export_settings(world.workspace)
    destination = factories.make_destination(world.workspace, name=QUERY_MARKER)
    execution = factories.make_execution(world.workspace, world.admin)
    package = factories.make_package(execution)
    get_storage().put_bytes(package.manifest_key, FILE_MARKER)
    delivery = factories.make_package_delivery(package, destination, failure_summary=QUERY_MARKER)
    run = factories.make_run(schedule, export)
    export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id)
    notice_id = db.session.scalars(select(ExportNotice.id)).first()
    assert notice_id is not None
    return Intrusion(
        workspace_id=world.workspace.id,
        other_workspace_id=world.other_workspace.id,
        query_id=query.id,
        file_id=export.id,
        report_id=report.id,
        template_id=template.id,
        version_id=template.versions[0].id,
        schedule_id=schedule.id,
        run_id=run.id,
        execution_id=execution.id,
        package_id=package.id,
        destination_id=destination.id,
        delivery_id=delivery.id,
        notice_id=notice_id,
        admin_email=world.admin.email,
        plain_member_email=world.member.email,
        outsider_email=world.outsider.email,
        ungranted_email=ungranted.email,
    )


def _url(app, route: Route, values: dict[str, int]) -> str:
    unknown = route.arguments - values.keys()
    if unknown:
        pytest.fail(f"{route.rule} takes {sorted(unknown)}: give this test a value for each", pytrace=False)
    return app.url_map.bind("localhost").build(
        route.endpoint, {name: values[name] for name in route.arguments}, method=route.method
    )


def _values(intrusion: Intrusion, workspace_id: int | None = None, token: str = FORGED_TOKENS[0]) -> dict:
    return {
        "workspace_id": workspace_id or intrusion.workspace_id,
        "query_id": intrusion.query_id,
        "file_id": intrusion.file_id,
        "report_id": intrusion.report_id,
        "template_id": intrusion.template_id,
        "version_id": intrusion.version_id,
        "token": token,
        "schedule_id": intrusion.schedule_id,
        "run_id": intrusion.run_id,
        "execution_id": intrusion.execution_id,
        "package_id": intrusion.package_id,
        "destination_id": intrusion.destination_id,
        "delivery_id": intrusion.delivery_id,
        "notice_id": intrusion.notice_id,
        # The staff lists share one route; tests/integration/staff tries each kind.
        "kind": "deliveries",
    }


def _try(client, app, route: Route, values: dict[str, int]):
    response = client.open(_url(app, route, values), method=route.method, data={})
    assert response.status_code != 500, f"{route.method} {route.rule} failed with 500"
    for marker in MARKERS:
        assert marker not in response.data, f"{route.method} {route.rule} leaked {marker!r}"
    return response


@pytest.mark.parametrize("route", _cases(lambda route: True))
def test_anonymous_visitors_get_nothing(client, app, intrusion, route):
    """Without signing in, every route sends to the login page or refuses, and shows no data."""
    response = _try(client, app, route, _values(intrusion))
    if route.endpoint in PUBLIC_ENDPOINTS | TOKEN_ENDPOINTS:
        return
    assert response.status_code in (302, 401, 404), f"{route.method} {route.rule} answered {response.status_code}"
    if response.status_code == 302:
        assert re.match(r"^(http://localhost)?/login", response.headers["Location"])


@pytest.mark.parametrize("route", _cases(lambda route: "workspace_id" in route.arguments))
def test_a_member_of_another_workspace_gets_404(client, app, auth, intrusion, route):
    """A member of workspace B gets 404 from every route of workspace A."""
    auth.login(intrusion.outsider_email)
    response = _try(client, app, route, _values(intrusion))
    assert response.status_code == 404


@pytest.mark.parametrize(
    "route",
    _cases(
        lambda route: (
            not route.endpoint.startswith("staff.") and (WORKSPACE_RECORD_IDS - {"workspace_id"}) & route.arguments
        )
    ),
)
def test_ids_of_another_workspace_are_not_found_in_ones_own(client, app, auth, intrusion, route):
    """A member of workspace B using A's query, file, report and schedule ids under B's own URL gets 404."""
    auth.login(intrusion.outsider_email)
    response = _try(client, app, route, _values(intrusion, workspace_id=intrusion.other_workspace_id))
    assert response.status_code == 404


@pytest.mark.parametrize("route", _cases(lambda route: "file_id" in route.arguments))
def test_a_plain_member_gets_404_for_someone_elses_file(client, app, auth, intrusion, route):
    """A member of the same workspace gets 404 from every route of the admin's file."""
    auth.login(intrusion.plain_member_email)
    response = _try(client, app, route, _values(intrusion))
    assert response.status_code == 404


@pytest.mark.parametrize("route", _cases(lambda route: route.endpoint in TEMPLATE_MANAGEMENT_ENDPOINTS))
def test_a_plain_member_gets_404_from_the_pages_that_change_templates(client, app, auth, intrusion, route):
    """Members read templates; only administrators and schedule managers reach the pages that change them."""


@pytest.mark.parametrize("route", _cases(lambda route: "schedule_id" in route.arguments))
def test_a_member_without_schedule_authority_gets_404_for_someone_elses_schedule(client, app, auth, intrusion, route):
    """A member of the same workspace without `schedules.manage` gets 404 from every route of the admin's schedule."""
    auth.login(intrusion.plain_member_email)
    response = _try(client, app, route, _values(intrusion))
    assert response.status_code == 404


@pytest.mark.parametrize("token", FORGED_TOKENS)
@pytest.mark.parametrize("route", _cases(lambda route: route.endpoint in TOKEN_ENDPOINTS))
def test_public_link_pages_answer_404_to_forged_tokens(client, app, intrusion, route, token):
    """Anyone may open an email's link page, and a forged token gets the plain invalid-link page."""
    response = _try(client, app, route, _values(intrusion, token=token))
    assert response.status_code == 404
    assert b"The link has expired or is no longer valid." in response.data


@pytest.mark.parametrize("route", _cases(lambda route: "query_id" in route.arguments))
def test_a_member_without_the_dataset_gets_404_for_its_query(client, app, auth, intrusion, route):
    """A member not granted the query's dataset gets 404 from every route of that query."""
    auth.login(intrusion.ungranted_email)
    response = _try(client, app, route, _values(intrusion))
    assert response.status_code == 404


def _csrf_token(html: str) -> str:
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html)
    assert match, "no CSRF token on the page"
    return match.group(1)


def test_a_post_without_the_csrf_token_is_refused_and_with_it_succeeds(csrf_app, world):
    """With CSRF protection on, a POST without the page's token answers 400; with it, it works."""
    client = csrf_app.test_client()
    login_token = _csrf_token(client.get("/login").get_data(as_text=True))
    client.post("/login", data={"email": world.member.email, "password": "password", "csrf_token": login_token})
    query = factories.make_query(world.workspace, world.member)
    url = f"/w/{world.workspace.id}/queries/{query.id}/delete"

    refused = client.post(url)
    assert refused.status_code == 400
    assert db.session.get(SavedQuery, query.id) is not None

    token = _csrf_token(client.get(url).get_data(as_text=True))
    accepted = client.post(url, data={"csrf_token": token})
    assert accepted.status_code == 302
    db.session.expire_all()
    assert db.session.get(SavedQuery, query.id) is None


@pytest.mark.parametrize("route", _cases(lambda route: route.endpoint.startswith(ADMIN_ONLY_BLUEPRINTS)))
def test_a_plain_member_gets_404_from_every_administrators_page(client, app, auth, intrusion, route):
    """Workspace export, the audit log and the activity charts are for administrators only."""
    auth.login(intrusion.plain_member_email)
    response = _try(client, app, route, _values(intrusion))
    assert response.status_code == 404


STAFF_ROUTES = _cases(lambda route: route.endpoint.startswith("staff."))


@pytest.mark.parametrize("route", STAFF_ROUTES)
def test_workspace_administrators_get_404_from_every_staff_page(client, app, auth, intrusion, route):
    """The staff console is for Rhythm staff: an administrator of the workspace it shows gets 404."""
    auth.login(intrusion.admin_email)
    assert _try(client, app, route, _values(intrusion)).status_code == 404


@pytest.mark.parametrize("route", STAFF_ROUTES)
def test_staff_with_view_only_read_every_staff_page_and_act_on_none(client, app, auth, intrusion, route):
    """`staff.view` opens every staff page; every staff action answers 403 and changes nothing."""
    viewer = factories.make_person(is_staff=True, staff_permissions=["staff.view"])
    auth.login(viewer.email)
    # Staff may see every workspace's records, markers included: only the answer is checked. A
    # fragment's address opened without htmx leads to its page, which is followed.
    response = client.open(
        _url(app, route, _values(intrusion)), method=route.method, data={}, follow_redirects=route.method == "GET"
    )
    assert response.status_code == (200 if route.method == "GET" else 403)
