"""The demo workspace as a newcomer first meets it: the main lists and the first preview rows of the
starter queries and reports show ordinary names, teams and projects. The hostile values are still
in the data (the test records, with a query and a report of their own) and in the demo's package.

"Hostile" here means the values no one is called ("=1+2", "  padded  ", "<b>bold</b>"…): the
hostile values that read as a name in another script ("Дмитрий Шостакович") are ordinary employees,
and welcome anywhere."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import ExportPackage, Report, SavedQuery, TeamMember, Workspace
from app.seed_data import HOSTILE_VALUES, reads_as_a_name
from app.services.demo.data_workspaces import DEMO_ADMIN_EMAIL, DEMO_LOGINS, DEMO_WORKSPACE, TEST_RECORDS_NAME
from app.services.demo.demo_export_seed import seed_demo_export
from app.services.demo.demo_seed import seed_demo
from app.services.workspace_export.coverage import reconcile_coverage
from app.storage import get_storage
from tests.fixtures.routes import HTMX
from tests.integration.packages.package_reading import read_package

ROWS = 2_000
NOBODYS_NAMES = [value for value in HOSTILE_VALUES if not reads_as_a_name(value)]
FIRST_PAGES = ["", "queries/", "reports/", "files/", "schedules/", "export/", "export/packages/"]


class _Texts(HTMLParser):
    """Every text node of the HTML, as read on screen (character references decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []

    def handle_data(self, data):
        if data.strip():
            self.texts.append(data)


def _hostile_shown(page: str) -> list[str]:
    """The hostile values no one is called that the page shows: in its <main> content, or anywhere
    in an htmx fragment (which has no <main>)."""
    main = re.search(r"<main[^>]*>(.*)</main>", page, re.S)
    parser = _Texts()
    parser.feed(main.group(1) if main else page)
    shown = "\n".join(parser.texts)
    return [value for value in NOBODYS_NAMES if value.strip() in shown]


@pytest.fixture
def demo(app_context, isolated_storage, destinations_root) -> Workspace:
    """The demo as `make run` makes it: the seed, the coverage registry and the workspace export."""
    seed_demo(ROWS)
    reconcile_coverage()
    assert seed_demo_export().endswith("succeeded.")
    return db.session.scalar(select(Workspace).where(Workspace.name == DEMO_WORKSPACE))


@pytest.fixture
def admin_client(client, demo):
    password = next(password for email, password, _who in DEMO_LOGINS if email == DEMO_ADMIN_EMAIL)
    assert client.post("/login", data={"email": DEMO_ADMIN_EMAIL, "password": password}).status_code == 302
    return client


def _starters(model) -> list[int]:
    return list(db.session.scalars(select(model.id).where(model.name != TEST_RECORDS_NAME).order_by(model.id)))


def test_the_first_page_of_each_main_list_shows_no_hostile_value(admin_client, demo):
    shown = {}
    for path in FIRST_PAGES:
        response = admin_client.get(f"/w/{demo.id}/{path}")
        assert response.status_code == 200, path
        shown[path] = _hostile_shown(response.get_data(as_text=True))

    assert shown == {path: [] for path in FIRST_PAGES}


def test_the_first_preview_rows_of_the_starter_queries_show_no_hostile_value(admin_client, demo):
    """Every starter query's preview (its first 50 rows), "Approved hours last 7 days" first among them."""
    shown = {}
    for query_id in _starters(SavedQuery):
        response = admin_client.get(f"/w/{demo.id}/queries/{query_id}/preview", headers=HTMX)
        page = response.get_data(as_text=True)
        assert response.status_code == 200 and "<table" in page, query_id
        shown[query_id] = _hostile_shown(page)

    assert shown == {query_id: [] for query_id in _starters(SavedQuery)}


def test_the_first_preview_rows_of_the_sample_reports_show_no_hostile_value(admin_client, demo):
    shown = {
        report_id: _hostile_shown(
            admin_client.get(f"/w/{demo.id}/reports/{report_id}/preview", headers=HTMX).get_data(as_text=True)
        )
        for report_id in _starters(Report)
    }

    assert shown == {report_id: [] for report_id in _starters(Report)}


def test_the_test_records_query_shows_the_hostile_values_on_purpose(admin_client, demo):
    query_id = db.session.scalar(select(SavedQuery.id).where(SavedQuery.name == TEST_RECORDS_NAME))

    page = admin_client.get(f"/w/{demo.id}/queries/{query_id}/preview", headers=HTMX).get_data(as_text=True)

    assert "=1+2" in _hostile_shown(page)


def test_the_test_records_are_the_employees_named_with_the_values_no_one_is_called(demo):
    names = db.session.execute(
        select(TeamMember.team_name, TeamMember.full_name).where(TeamMember.workspace_id == demo.id)
    ).all()

    hostile = {name for team, name in names if name in NOBODYS_NAMES}
    assert hostile and {team for team, name in names if name in hostile} == {TEST_RECORDS_NAME}


def test_the_demo_package_carries_every_hostile_value(demo):
    """The package the demo made holds each hostile value, intact, in the timesheet entries' notes."""
    package = db.session.scalar(select(ExportPackage).where(ExportPackage.workspace_id == demo.id))
    read = read_package(get_storage(), package)
    columns = [column["name"] for column in read.dataset("timesheet_entries")["columns"]]

    notes = {row[columns.index("note")] for row in read.csv_rows("timesheet_entries")}
    assert set(HOSTILE_VALUES) - notes == set()
