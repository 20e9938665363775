"""The file request form's text and time-stamp choices: stored with the file, refused clearly, CSRF kept."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select, update

from app.extensions import db
from app.models import ExportFile, Workspace
from tests import factories


def _files_count() -> int:
    return db.session.scalar(select(func.count()).select_from(ExportFile))


def _request_file(client, world, query, **form):
    return client.post(f"/w/{world.workspace.id}/queries/{query.id}/files", data={"heading": "names", **form})


@pytest.fixture
def kolkata(world):
    db.session.execute(update(Workspace).where(Workspace.id == world.workspace.id).values(time_zone="Asia/Kolkata"))
    db.session.commit()
    return world


def test_the_form_offers_exact_values_and_time_stamps_with_the_workspace_zone(client, auth, kolkata):
    """The request form explains "for data tools: exact values" and names the workspace's time zone."""
    query = factories.make_query(kolkata.workspace, kolkata.member)
    auth.login(kolkata.member.email)
    page = client.get(f"/w/{kolkata.workspace.id}/queries/{query.id}").get_data(as_text=True)
    assert 'name="exact_values"' in page and "For data tools: exact values" in page
    assert "opening the file in a spreadsheet may run formulas" in page
    assert 'name="time_stamps" value="workspace" checked' in page
    assert "(Asia/Kolkata)" in page and 'value="utc"' in page


def test_an_xlsx_file_stores_the_workspace_zone_by_default_and_utc_when_asked(client, auth, kolkata):
    """Default: the workspace's zone; "UTC": UTC. The file page names the zone."""
    query = factories.make_query(kolkata.workspace, kolkata.member)
    auth.login(kolkata.member.email)
    _request_file(client, kolkata, query, format="xlsx")
    _request_file(client, kolkata, query, format="xlsx", time_stamps="utc")
    files = db.session.execute(select(ExportFile).order_by(ExportFile.id)).scalars().all()
    assert [f.time_zone for f in files] == ["Asia/Kolkata", "UTC"]
    page = client.get(f"/w/{kolkata.workspace.id}/files/{files[0].id}").get_data(as_text=True)
    assert "<dt>Time stamps</dt><dd>Asia/Kolkata</dd>" in page


def test_a_csv_file_stores_exact_values_when_asked_and_utc_always(client, auth, kolkata):
    """Exact values is stored on the file; CSV times are UTC whatever the zone choice."""
    query = factories.make_query(kolkata.workspace, kolkata.member)
    auth.login(kolkata.member.email)
    _request_file(client, kolkata, query, format="csv", exact_values="y")
    _request_file(client, kolkata, query, format="csv")
    files = db.session.execute(select(ExportFile).order_by(ExportFile.id)).scalars().all()
    assert [(f.exact_values, f.time_zone) for f in files] == [(True, "UTC"), (False, "UTC")]
    page = client.get(f"/w/{kolkata.workspace.id}/files/{files[0].id}").get_data(as_text=True)
    assert "Exact values, for data tools" in page


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"format": "xlsx", "time_stamps": "mars"}, "time_stamps", "Choose UTC or the workspace&#39;s time zone"),
        ({"format": "xlsx", "exact_values": "y"}, "exact_values", "Exact values is a CSV choice"),
    ],
)
def test_bad_choices_get_a_message_by_the_field_and_no_file(client, auth, world, form, field, message):
    """An unknown zone choice, or exact values on XLSX: 400, the message by its field, nothing stored."""
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    response = _request_file(client, world, query, **form)
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert f'id="error-{field}"' in page and message in page
    assert _files_count() == 0


def test_the_database_refuses_exact_values_on_an_xlsx_file(world):
    """The CHECK constraint holds the rule whatever the code does."""
    from sqlalchemy.exc import IntegrityError

    query = factories.make_query(world.workspace, world.admin)
    with pytest.raises(IntegrityError):
        factories.make_export(query, world.admin, format="xlsx", exact_values=True)
    db.session.rollback()


def _csrf_token(html: str) -> str:
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html)
    assert match, "no CSRF token on the page"
    return match.group(1)


def test_the_file_request_with_its_options_needs_the_csrf_token(csrf_app, world):
    """Without the page's token the request is refused and nothing is stored; with it the options are stored."""
    client = csrf_app.test_client()
    login_token = _csrf_token(client.get("/login").get_data(as_text=True))
    client.post("/login", data={"email": world.member.email, "password": "password", "csrf_token": login_token})
    query = factories.make_query(world.workspace, world.member)
    url = f"/w/{world.workspace.id}/queries/{query.id}/files"
    form = {"format": "csv", "heading": "names", "exact_values": "y"}
    assert client.post(url, data=form).status_code == 400
    assert _files_count() == 0
    token = _csrf_token(client.get(f"/w/{world.workspace.id}/queries/{query.id}").get_data(as_text=True))
    assert client.post(url, data={**form, "csrf_token": token}).status_code == 302
    assert db.session.execute(select(ExportFile.exact_values)).scalar_one() is True
