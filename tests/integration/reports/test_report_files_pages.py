"""Report files on the Files pages: listed with the others, a detail naming the report, the same progress."""

from __future__ import annotations

from sqlalchemy import delete

from app.extensions import db
from app.models import Report
from app.services.files.export_runner import run_export_file


def _files_url(world, tail: str = "") -> str:
    return f"/w/{world.workspace.id}/files/{tail}"


def test_a_queued_report_file_is_listed_with_a_progress_bar(client, auth, kit):
    """The Files page lists the report file by the report's name, with the same polling progress fragment."""
    report = kit.report(kind="coded")
    export = kit.request(report, "pdf", person=kit.world.member)
    auth.login(kit.world.member.email)
    page = client.get(_files_url(kit.world)).get_data(as_text=True)
    assert report.name in page and export.file_name in page and "PDF" in page
    assert f"/files/{export.id}/progress" in page


def test_the_detail_page_names_the_report_its_kind_version_and_page(client, auth, kit, isolated_storage):
    """A succeeded report file's page links to the report and shows kind, version and page set-up."""
    report = kit.report(kind="table", orientation="landscape", version=3)
    export = kit.request(report, "xlsx", person=kit.world.member)
    assert run_export_file(export.id) == "succeeded"
    auth.login(kit.world.member.email)
    page = client.get(_files_url(kit.world, f"{export.id}")).get_data(as_text=True)
    assert f'href="/w/{kit.world.workspace.id}/reports/{report.id}"' in page
    assert "(table, version 3)" in page and "A4, landscape" in page
    assert "Heading row" not in page
    assert client.get(_files_url(kit.world, f"{export.id}/download")).status_code == 200


def test_a_file_of_a_deleted_report_says_so_and_shows_its_failure(client, auth, kit, isolated_storage):
    """After the report is deleted, its queued file fails source_missing; the page keeps the name and says why."""
    report = kit.report(kind="table")
    export = kit.request(report, "pdf", person=kit.world.member)
    db.session.execute(delete(Report).where(Report.id == report.id))
    db.session.commit()
    assert run_export_file(export.id) == "source_missing"
    auth.login(kit.world.member.email)
    page = client.get(_files_url(kit.world, f"{export.id}")).get_data(as_text=True)
    assert report.name in page and "the report has since been deleted" in page
    assert "source_missing" in page and "deleted before the file was made" in page
    assert client.get(_files_url(kit.world, f"{export.id}/download")).status_code == 409
