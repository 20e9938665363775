"""A report's file request form is sent once: its one-time token answers a repeat with the first file."""

from __future__ import annotations

import re

from sqlalchemy import func, select

from app.extensions import db
from app.models import ExportFile

_TOKEN = re.compile(r'name="request_token" value="([^"]+)"')


def _form_token(client, kit, report) -> str:
    page = client.get(f"/w/{kit.world.workspace.id}/reports/{report.id}").get_data(as_text=True)
    return _TOKEN.search(page).group(1)


def _request_file(client, kit, report, **form):
    return client.post(f"/w/{kit.world.workspace.id}/reports/{report.id}/files", data={"format": "pdf", **form})


def test_twelve_posts_of_one_report_form_make_one_file_and_all_redirect_to_it(client, auth, kit):
    report = kit.report(kind="table")
    auth.login(kit.world.member.email)
    token = _form_token(client, kit, report)
    answers = [_request_file(client, kit, report, request_token=token) for _ in range(12)]
    only = db.session.execute(select(ExportFile)).scalar_one()
    assert {answer.headers["Location"] for answer in answers} == {f"/w/{kit.world.workspace.id}/files/{only.id}"}


def test_two_report_forms_make_two_files(client, auth, kit):
    report = kit.report(kind="table")
    auth.login(kit.world.member.email)
    for _ in range(2):
        _request_file(client, kit, report, request_token=_form_token(client, kit, report))
    assert db.session.scalar(select(func.count()).select_from(ExportFile)) == 2


def test_one_report_form_sent_as_pdf_then_as_excel_makes_two_files(client, auth, kit):
    report = kit.report(kind="table")
    auth.login(kit.world.member.email)
    token = _form_token(client, kit, report)
    for file_format in ("pdf", "xlsx", "xlsx"):
        _request_file(client, kit, report, request_token=token, format=file_format)
    formats = db.session.execute(select(ExportFile.format).order_by(ExportFile.id)).scalars().all()
    assert formats == ["pdf", "xlsx"]


def test_the_report_files_page_offers_to_request_another_from_the_report(client, auth, kit):
    report = kit.report(kind="table")
    auth.login(kit.world.member.email)
    answer = _request_file(client, kit, report, request_token=_form_token(client, kit, report))
    shown = client.get(answer.headers["Location"]).get_data(as_text=True)
    assert f'href="/w/{kit.world.workspace.id}/reports/{report.id}#request-title">Request another file</a>' in shown


def test_a_damaged_report_form_token_is_refused_with_a_message(client, auth, kit):
    report = kit.report(kind="table")
    auth.login(kit.world.member.email)
    page = _request_file(client, kit, report, request_token="<script>")
    assert page.status_code == 400
    assert "The form was damaged on its way here, so no file was requested." in page.get_data(as_text=True)
    assert db.session.scalar(select(func.count()).select_from(ExportFile)) == 0
