"""Generated values in every form field of every route: never a 500, never a write behind an error.

The routes come from the app's url_map and the field names from the templates (every input,
select, textarea, button and hx-vals key) and the WTForms classes, so a route or field added
later is fuzzed too. Each example starts from a valid form for the route (so saving, previewing
and requesting files are reached, not only the first check), replaces a few fields with
generated values (NUL, digits Python reads but forms should not, integers beyond the database's
range, hostile text) and may swap the URL's ids for out-of-range ones. POST routes get the
values in the body, GET routes in the query string. A signed-in member with data sends them;
the sign-in form is fuzzed signed out.

Hypothesis runs derandomized (the same examples on every run), without deadlines, with a
bounded number of examples per route. Half the fields an example changes are the route's own (its
valid form's, or its list's filters), so short forms such as the staff actions' and the lists'
filters meet every kind of bad value, not only the long forms.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from flask_wtf import FlaskForm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text
from wtforms.fields.core import UnboundField

from app.extensions import db
from app.models import CommunicationTemplateVersion, Report, SavedQuery
from app.models.export_destination import ExportDestination
from app.models.export_notice import ExportNotice, NoticeKind
from app.models.export_settings import ExportSettings
from app.models.schedule import Schedule
from app.security.credentials import encrypt_secret
from app.services.files import file_library
from app.services.pages.list_pages import CURSOR_PARAM, SEARCH_PARAM, SORT_PARAM, ListSpec
from app.services.pages.public_link_tokens import link_token
from app.services.schedules import schedules
from app.services.sources import reports, saved_queries
from app.services.staff import staff_lists
from app.services.workspace import audit_log
from app.services.workspace_export import export_notices, package_history
from app.storage import get_storage
from tests import factories
from tests.fixtures.routes import Route, collect_routes

# /readyz answers 503 while no worker listens, which is its message, not a failure; it reads no form.
ROUTES = [route for route in collect_routes() if route.endpoint != "health.readyz"]
# These are a workspace's administrators' pages: the fuzz signs in as one for them.
ADMIN_BLUEPRINTS = ("export_settings.", "packages.", "audit.", "activity.")
EXAMPLES = {"POST": 60, "GET": 15}
TEMPLATES = Path(__file__).resolve().parents[3] / "app" / "templates"

_FIELD_TAG = re.compile(r"<(?:input|select|textarea|button)\b[^>]*?\bname=\"([^\"]+)\"", re.DOTALL)
_HX_VALS = re.compile(r"hx-vals='(\{[^']*\})'")
_TEMPLATE_EXPRESSION = re.compile(r"\{\{.*?\}\}")


def _template_field(name: str) -> str:
    """A field name as the page would post it: a row index becomes 0, a column name a real column."""
    return _TEMPLATE_EXPRESSION.sub(lambda m: "hours" if "name" in m.group(0) else "0", name)


def form_field_names() -> list[str]:
    """Every field name the templates and the WTForms classes post, without the CSRF token."""
    names: set[str] = set()
    for template in TEMPLATES.rglob("*.html"):
        source = template.read_text()
        names.update(_template_field(name) for name in _FIELD_TAG.findall(source))
        for values in _HX_VALS.findall(source):
            names.update(json.loads(values))
    for form_class in FlaskForm.__subclasses__():
        names.update(name for name, value in vars(form_class).items() if isinstance(value, UnboundField))
    names.discard("csrf_token")
    return sorted(names)


# The lists' filters are written by a macro from each list's spec, so their names are read there.
LIST_SPECS: dict[str, tuple[ListSpec, ...]] = {
    "queries.index": (saved_queries.QUERY_LIST,),
    "reports.index": (reports.REPORT_LIST,),
    "schedules.index": (schedules.SCHEDULE_LIST,),
    "files.index": (file_library.FILE_LIST,),
    "packages.package_list": (package_history.PACKAGE_LIST,),
    "audit.index": (audit_log.AUDIT_LIST,),
    "audit.request_file": (audit_log.AUDIT_LIST,),
    "staff.records": tuple(staff_list.spec for staff_list in staff_lists.LISTS.values()),
}


def list_form(endpoint: str) -> dict:
    """Every parameter the endpoint's list reads, unset: the fuzz fills some of them."""
    names = {SEARCH_PARAM: "", SORT_PARAM: "", CURSOR_PARAM: ""}
    for spec in LIST_SPECS.get(endpoint, ()):
        names.update(dict.fromkeys(spec.filters, ""))
    return names if endpoint in LIST_SPECS else {}


FIELDS = sorted(set(form_field_names()).union(*(list_form(endpoint) for endpoint in LIST_SPECS)))

# What issue 8 found answering 500: NUL, digits Python reads but a form should not, integers
# beyond the database's range or Python's digit limit; and their neighbours.
BAD_INPUT = [
    "\x00",
    "a\x00b",
    "²",
    "٣",
    "١٢٣",
    "1_000",
    "0",
    "-1",
    "+3",
    "2147483647",
    "2147483648",
    "9223372036854775808",
    "9" * 23,
    "9" * 5000,
    "1e400",
    "NaN",
    "-Infinity",
    "2026-02-30",
    "２０２６-01-01",
    "",
    " ",
    "\u202e",
    "\ufeff",
    "x" * 5000,
]
ACTIONS = [
    "save",
    "preview",
    "refresh",
    "dataset",
    "add_filter",
    "add_parameter",
    "remove_filter:0",
    "remove_filter:²",
    "remove_filter:" + "9" * 5000,
    "remove_parameter:٣",
    "up:hours",
    "down:work_date",
    "up:",
]
OUT_OF_RANGE_IDS = ["0", "2147483647", "2147483648", "9" * 23, "9" * 5000]

# Browsers cannot send lone surrogates (they are not UTF-8), so neither does the test client.
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_value = st.one_of(
    st.sampled_from(BAD_INPUT),
    st.sampled_from(factories.hostile_values()),
    _text,
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
)
_field_value = st.one_of(_value, st.lists(_value, min_size=2, max_size=3))


def _valid_query_form() -> dict:
    return {
        "name": "Fuzzed query",
        "dataset": "timesheet_entries",
        "columns": ["person_name", "work_date", "hours", "note"],
        "column_order": ["person_name", "work_date", "hours", "note"],
        "filters-0-column": "hours",
        "filters-0-op": "ge",
        "filters-0-value": "7",
        "sort-0-column": "work_date",
        "sort-0-direction": "desc",
        "parameters-0-column": "work_date",
        "parameters-0-range": "last_30_days",
        "row_limit": "500",
        "action": "save",
    }


def _valid_report_form(query_id: int) -> dict:
    return {
        "name": "Fuzzed report",
        "kind": "coded",
        "source_query_id": str(query_id),
        "columns": ["person_name", "work_date", "hours"],
        "width-hours": "15",
        "code_column": "team_name",
        "code_descriptions": "Team A = Day ward",
        "group_column": "team_name",
        "figures-0-function": "sum",
        "figures-0-column": "hours",
        "figures-0-label": "Hours",
        "title": "Hours by team",
        "subtitle": "",
        "page_size": "A4",
        "orientation": "landscape",
        "show_filters": "y",
        "action": "save",
    }


def _valid_schedule_form(query_id: int, person_id: int) -> dict:
    return {
        "name": "Fuzzed schedule",
        "source": f"query:{query_id}",
        "format": "xlsx",
        "heading": "labels",
        "frequency": "weekly",
        "days": ["mon", "thu"],
        "time": "07:30",
        "minute": "15",
        "day": "last",
        "expression": "30 7 * * 1-5",
        "zone": "Europe/London",
        "viewer_zone": "America/New_York",
        "people": [str(person_id)],
        "addresses": "",
        "custom_message": "Here is this week's file.",
        "send_condition": "has_rows",
    }


def _valid_form(endpoint: str, query: SavedQuery, report: Report, login_email: str) -> dict:
    """A form the POST route accepts as it is, so a generated value is the only thing wrong.

    The versions are read now: an earlier example may have saved the query or report.
    """
    query_version = db.session.scalar(select(SavedQuery.version).where(SavedQuery.id == query.id)) or 1
    report_version = db.session.scalar(select(Report.version).where(Report.id == report.id)) or 1
    schedule_version = db.session.scalar(select(Schedule.version).where(Schedule.source_query_id == query.id)) or 1
    destination_version = (
        db.session.scalar(select(ExportDestination.version).where(ExportDestination.name == _FUZZ_DESTINATION["name"]))
        or 1
    )
    settings_version = db.session.scalar(select(ExportSettings.version)) or ""
    db.session.rollback()
    query_form = _valid_query_form()
    report_form = _valid_report_form(query.id)
    schedule_form = _valid_schedule_form(query.id, query.owner_id)
    return {
        "auth.login": {"email": login_email, "password": factories.PASSWORD},
        "queries.new": query_form,
        "queries.edit": {**query_form, "version": str(query_version)},
        "queries.builder": {**query_form, "action": "add_filter"},
        "queries.preview_draft": query_form,
        "queries.request_file": {"format": "xlsx", "heading": "labels", "include_descriptions": "y"},
        "reports.new": report_form,
        "reports.edit": {**report_form, "version": str(report_version)},
        "reports.form_fields": {**report_form, "changed": "source_query_id"},
        "reports.draft_preview": report_form,
        "reports.request_file": {"format": "pdf"},
        "templates.new": {"name": "Fuzzed template", "subject": "Weekly hours", "body": "The file is attached."},
        "templates.edit_draft": {"subject": "Weekly hours", "body": "The file is attached."},
        "public_links.unsubscribe": {"List-Unsubscribe": "One-Click"},
        "schedules.new": schedule_form,
        "schedules.edit": {**schedule_form, "version": str(schedule_version)},
        "schedules.upcoming": schedule_form,
        "schedules.resume": {"legacy_switched_off": "y"},
        "export_settings.settings": {**_valid_export_settings_form(), "version": str(settings_version)},
        "export_settings.attachment_policy_settings": {"choice": "attach", "limit_mb": "5"},
        "export_settings.add_destination": {**_FUZZ_DESTINATION, "path": "fuzzed"},
        "export_settings.destination": {**_FUZZ_DESTINATION, "version": str(destination_version)},
        "export_settings.replace_secret": {"secret": "fuzzed-secret-2"},
        "staff.suspend_export": {"reason": "Fuzzed suspension"},
        "staff.resume_export": {"reason": "Fuzzed resumption"},
        "staff.stop_execution": {"attempt": "1", "reason": "Fuzzed stop"},
        "staff.requeue": {"job_id": "fuzzed-job", "reason": "Fuzzed requeue"},
        "queries.filter_values": {"dataset": "timesheet_entries", "index": "0", "column": "id", "op": "eq"},
    }.get(endpoint) or list_form(endpoint)


# An S3 destination whose endpoint nothing listens on, so "Test connection" is refused at once and
# never reaches the internet.
_FUZZ_DESTINATION = {
    "name": "Fuzzed destination",
    "kind": "s3",
    "bucket": "fuzzed-bucket",
    "region": "us-east-1",
    "endpoint_url": "http://127.0.0.1:9",
    "access_key_id": "AKIAFUZZED",
    "secret": "",
    "path": "",
}


def _valid_export_settings_form() -> dict:
    return {
        "datasets": ["teams", "shifts"],
        "format": "jsonl",
        "volume_size_mb": "64",
        "retention_days": "14",
        "cadence": "monthly",
        "cadence_time": "03:30",
        "cadence_weekday": "2",
        "cadence_day": "28",
        "notify_person_ids": [],
        "status": "active",
    }


def _rarely(strategy: st.SearchStrategy[str], otherwise: str) -> st.SearchStrategy[str]:
    """`strategy` one time in eight, else `otherwise`: most examples keep the URL's ids valid."""
    return st.integers(min_value=0, max_value=7).flatmap(lambda n: strategy if n == 0 else st.just(otherwise))


def _unique_names(form: dict, number: int) -> dict:
    """A fresh name for each example's save, so a taken name does not stop it before the other checks."""
    return {"name": f"{form['name']} {number}"} if "name" in form and "email" not in form else {}


def _row_snapshot(exclude: frozenset[str]) -> dict[str, str]:
    """A digest of every table's rows, to tell whether a request wrote anything."""
    tables = [table.name for table in db.metadata.sorted_tables if table.name not in exclude]
    columns = ", ".join(
        f"(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {name} t) AS {name}"
        for name in tables
    )
    row = db.session.execute(text(f"SELECT {columns}")).mappings().one()
    db.session.rollback()
    return dict(row)


def _path(route: Route, values: dict[str, str]) -> str:
    return re.sub(r"<(?:int:)?(\w+)>", lambda match: values[match.group(1)], route.rule)


@pytest.fixture
def member_with_data(world):
    """The world's member owns a query (presented by a report and sent by a schedule) and a queued file of it,
    manages schedules (so the pages that change templates are reached), and a message template has a
    published version and a draft; the member's schedule sent a recipient a link."""
    world.member_membership.grants = ["schedules.manage"]
    query = factories.make_query(world.workspace, world.member, name="Member's hours")
    report = factories.make_report(query, world.member, name="Member's report", title="Member's report")
    export = factories.make_export(query, world.member)
    template = factories.make_template(world.workspace, world.member, published=True)
    draft = CommunicationTemplateVersion(
        template_id=template.id, number=2, subject="Draft", body="Draft", created_by_id=world.member.id
    )
    db.session.add(draft)
    db.session.commit()
    schedule = factories.make_schedule(query, world.member, name="Member's schedule")
    delivery = factories.make_delivery(factories.make_run(schedule, export))
    world.template_ids = {"template_id": str(template.id), "version_id": str(draft.id)}
    world.link_nonce = delivery.link_nonce
    columns = {key: value for key, value in _FUZZ_DESTINATION.items() if key != "secret"}
    destination = factories.make_destination(
        world.workspace,
        **columns,
        secret_ciphertext=encrypt_secret("fuzzed-secret"),
        connection_key="s3:http://127.0.0.1:9/fuzzed-bucket",
    )
    package = factories.make_package(factories.make_execution(world.workspace, world.admin))
    get_storage().put_bytes(package.manifest_key, b'{"format_version": 1}')
    package_delivery = factories.make_package_delivery(package, destination)
    export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id)
    notice_id = db.session.scalars(select(ExportNotice.id)).first()
    world.export_ids = {
        "notice_id": str(notice_id),
        "destination_id": str(destination.id),
        "execution_id": str(package.execution_id),
        "package_id": str(package.id),
        "delivery_id": str(package_delivery.id),
        "run_id": str(delivery.run_id),
        "kind": "deliveries",
    }
    world.staff = factories.make_person(is_staff=True, staff_permissions=["staff.view", "staff.execute"])
    return world, query, report, export, schedule


def test_the_templates_and_forms_name_the_fields_the_fuzz_sends():
    """The field list is read from the pages, so it holds the builder's, the report form's and sign-in's fields."""
    assert {"name", "filters-0-value", "width-hours", "figures-0-label", "email", "password", "version"} <= set(FIELDS)
    assert {"q", "sort", "after", "workspace", "status", "since", "until", "code"} <= set(FIELDS)


def _sign_in_for(route: Route, auth, world) -> None:
    """Administrators' and staff pages would show a member only their 404s."""
    if route.endpoint == "auth.login":
        return
    if route.endpoint.startswith("staff."):
        auth.login(world.staff.email)
    elif route.endpoint.startswith(ADMIN_BLUEPRINTS):
        auth.login(world.admin.email)
    else:
        auth.login(world.member.email)


def _valid_ids(route: Route, member_with_data) -> dict[str, str]:
    world, query, report, export, schedule = member_with_data
    ids = {
        "workspace_id": str(world.workspace.id),
        "query_id": str(query.id),
        "report_id": str(report.id),
        "file_id": str(export.id),
        **world.template_ids,
        "schedule_id": str(schedule.id),
        **world.export_ids,
    }
    if "token" in route.arguments:
        # The route's own kind of link ("public_links.download" takes a download token).
        ids["token"] = link_token(world.link_nonce, route.endpoint.removeprefix("public_links."))
    return ids


def _unwatched(route: Route) -> frozenset[str]:
    # A refused sign-in counts the failure on the person's row: that write is the throttle working.
    return frozenset({"people"}) if route.endpoint == "auth.login" else frozenset()


def _send_and_check(client, route: Route, ids: dict[str, str], form: dict) -> None:
    """Send the form; no 500, no internals in the answer, and no row written behind an error."""
    before = _row_snapshot(_unwatched(route))
    if route.method == "GET":
        response = client.get(_path(route, ids) + "?" + urlencode(form, doseq=True))
    else:
        response = client.open(_path(route, ids), method=route.method, data=form)
    shown = {key: str(value)[:40] for key, value in form.items()}
    assert response.status_code < 500, f"{route.method} {route.rule} answered {response.status_code} to {shown}"
    body = response.get_data()
    assert b"Traceback" not in body and b"psycopg" not in body and b"[SQL:" not in body
    if response.status_code >= 400:
        assert _row_snapshot(_unwatched(route)) == before, f"{route.method} {route.rule} wrote rows behind an error"


@pytest.mark.parametrize("route", [pytest.param(r, id=f"{r.method} {r.rule}") for r in ROUTES])
def test_generated_form_values_never_answer_500_nor_write_behind_an_error(app, client, auth, member_with_data, route):
    """Every route, given generated values in its fields (and ids), answers without a 500 and,
    when it answers an error, leaves every table as it was."""
    world, query, report, export, schedule = member_with_data
    login_person = factories.make_person()
    _sign_in_for(route, auth, world)
    valid_ids = _valid_ids(route, member_with_data)
    valid_form = _valid_form(route.endpoint, query, report, login_person.email)
    # The route's own fields are drawn half the time, the others (which it should ignore) the rest.
    field_names = st.sampled_from(list(valid_form)) | st.sampled_from(FIELDS) if valid_form else st.sampled_from(FIELDS)
    numbers = itertools.count(1)

    @settings(
        max_examples=EXAMPLES[route.method],
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def send_generated_values(data):
        ids = {
            name: data.draw(_rarely(st.sampled_from(OUT_OF_RANGE_IDS), valid_ids[name]), label=name)
            for name in sorted(route.arguments)
        }
        form = _valid_form(route.endpoint, query, report, login_person.email)
        form.update(_unique_names(form, next(numbers)))
        for field in data.draw(st.lists(field_names, max_size=4, unique=True), label="fields"):
            strategy = st.sampled_from(ACTIONS) | _field_value if field == "action" else _field_value
            form[field] = data.draw(strategy, label=field)
        _send_and_check(client, route, ids, form)

    send_generated_values()


# The forms short enough to try every bad value in every one of their fields, one at a time: the
# staff actions, the lists' filters, the builder's value list.
SHORT_FORM_LIMIT = 8
SHORT_FORM_ROUTES = [
    route
    for route in ROUTES
    if route.endpoint.startswith("staff.") or route.endpoint in LIST_SPECS or route.endpoint == "queries.filter_values"
]


@pytest.mark.parametrize("route", [pytest.param(r, id=f"{r.method} {r.rule}") for r in SHORT_FORM_ROUTES])
def test_every_bad_value_in_each_field_of_a_short_form_never_answers_500(app, client, auth, member_with_data, route):
    """What the generated examples may miss by chance: each of BAD_INPUT in each of the form's fields."""
    world, query, report, _, _ = member_with_data
    _sign_in_for(route, auth, world)
    ids = _valid_ids(route, member_with_data)
    valid_form = _valid_form(route.endpoint, query, report, "")
    assert len(valid_form) <= SHORT_FORM_LIMIT
    for field in valid_form:
        for value in BAD_INPUT:
            _send_and_check(client, route, ids, {**valid_form, field: value})
