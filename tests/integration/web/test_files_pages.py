"""The Files pages: requesting a file, the list, the detail page, progress polling and download."""

from __future__ import annotations

import logging
import socket
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from app.domain.files import export_file
from app.domain.sources.query_spec import resolve_range
from app.extensions import db
from app.models import ExportFile, ExportFileRequest
from app.models.export_file import FailureCode
from app.models.types import utcnow
from app.services.work.engine import redispatch_lost
from app.services.work.queue import WorkPriority, work_queue
from app.services.work.work_kind import LOST_AFTER
from app.storage import get_storage
from tests import factories
from tests.fixtures.routes import HTMX
from tests.fixtures.workers import queues_unreachable

XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _count(model) -> int:
    return db.session.scalar(select(func.count()).select_from(model))


def _files_url(world, tail: str = "") -> str:
    return f"/w/{world.workspace.id}/files/{tail}"


def _succeeded(export: ExportFile, content: bytes, rows: int = 2) -> ExportFile:
    """Store the bytes at the file's key and settle it as a worker would."""
    attempt = export_file.start(export.id)
    get_storage().put_bytes(export.storage_key, content)
    export_file.succeed(export.id, attempt, size_bytes=len(content), row_count=rows, retention_days=30)
    db.session.refresh(export)
    return export


def test_requesting_a_csv_creates_one_queued_file_and_one_outbox_row(client, auth, world):
    """A CSV request writes exactly one queued file and its outbox row, with the parameters substituted."""
    query = factories.make_query(
        world.workspace, world.member, name="Last week", parameters=[{"column": "work_date", "range": "last_7_days"}]
    )
    auth.login(world.member.email)
    response = client.post(
        f"/w/{world.workspace.id}/queries/{query.id}/files", data={"format": "csv", "heading": "labels"}
    )
    export = db.session.execute(select(ExportFile)).scalar_one()
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/files/{export.id}")
    assert _count(ExportFile) == 1
    assert _count(ExportFileRequest) == 1
    first, last = resolve_range("last_7_days", utcnow().date())
    assert (export.status, export.format, export.heading, export.requester_id) == (
        "queued",
        "csv",
        "labels",
        world.member.id,
    )
    assert {"column": "work_date", "op": "between", "value": [first.isoformat(), last.isoformat()]} in (
        export.request["filters"]
    )
    assert export.request["parameters_applied"][0]["range"] == "last_7_days"


def test_a_descriptions_row_with_csv_is_refused_and_writes_nothing(client, auth, world):
    """Asking for a descriptions row in a CSV file shows a message on the form and writes no row."""
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    response = client.post(
        f"/w/{world.workspace.id}/queries/{query.id}/files",
        data={"format": "csv", "heading": "names", "include_descriptions": "y"},
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "A descriptions row can only be added to an Excel (XLSX) file." in page
    assert 'id="error-include_descriptions"' in page
    assert _count(ExportFile) == 0
    assert _count(ExportFileRequest) == 0


def test_an_xlsx_with_descriptions_is_accepted(client, auth, world):
    """An XLSX file may carry the descriptions row."""
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    client.post(
        f"/w/{world.workspace.id}/queries/{query.id}/files",
        data={"format": "xlsx", "heading": "labels", "include_descriptions": "y"},
    )
    export = db.session.execute(select(ExportFile)).scalar_one()
    assert (export.format, export.include_descriptions) == ("xlsx", True)


def test_the_list_shows_only_the_persons_own_files_newest_first(client, auth, world):
    """The list has the person's files, newest first, and none of anybody else's."""
    query = factories.make_query(world.workspace, world.admin, name="Shared query")
    now = utcnow()
    factories.make_export(query, world.member, source_name="Older file", requested_at=now - timedelta(hours=2))
    factories.make_export(query, world.member, source_name="Newer file", requested_at=now - timedelta(hours=1))
    factories.make_export(query, world.admin, source_name="Admin file", requested_at=now)
    auth.login(world.member.email)
    page = client.get(_files_url(world)).get_data(as_text=True)
    assert page.index("Newer file") < page.index("Older file")
    assert "Admin file" not in page
    assert 'hx-trigger="every 2s"' in page


def test_the_detail_page_shows_format_source_request_and_outcome(client, auth, world):
    """A succeeded file's page shows format, source with version, the substituted filters, rows and size."""
    query = factories.make_query(world.workspace, world.member, name="Hours query", version=3)
    export = factories.make_export(
        query,
        world.member,
        format="xlsx",
        request={
            **factories.stored_request(query),
            "filters": [{"column": "work_date", "op": "between", "value": ["2026-11-01", "2026-11-07"]}],
            "parameters_applied": [
                {"column": "work_date", "range": "last_7_days", "from": "2026-11-01", "to": "2026-11-07"}
            ],
        },
    )
    _succeeded(export, b"x" * 2048, rows=12)
    auth.login(world.member.email)
    page = client.get(_files_url(world, str(export.id))).get_data(as_text=True)
    assert "Excel (XLSX)" in page
    assert "(version 3)" in page
    assert "Date between 2026-11-01 and 2026-11-07" in page
    assert "Last 7 days (2026-11-01 to 2026-11-07)" in page
    assert "<dd>12</dd>" in page
    assert "2.0 KB" in page
    assert "Available until" in page
    assert f"/files/{export.id}/download" in page


def test_a_failed_files_page_shows_the_code_and_a_readable_detail(client, auth, world):
    """A failed file shows its failure code, an explanation and the recorded detail."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    export_file.fail(export.id, 0, FailureCode.ACCESS_LOST, "The dataset grant for timesheet_entries was removed.")
    auth.login(world.member.email)
    page = client.get(_files_url(world, str(export.id))).get_data(as_text=True)
    assert "access_lost" in page
    assert "You no longer had access to this data" in page
    assert "The dataset grant for timesheet_entries was removed." in page


def test_progress_polls_while_running_and_answers_286_once_settled(client, auth, world):
    """The progress fragment answers 200 with a polling bar while running, then 286 without polling."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member, requested_at=utcnow() - timedelta(minutes=1))
    attempt = export_file.start(export.id)
    export_file.record_progress(export.id, attempt, rows_written=50, rows_total=200)
    auth.login(world.member.email)
    url = _files_url(world, f"{export.id}/progress")
    running = client.get(url, headers=HTMX)
    assert running.status_code == 200
    assert 'hx-trigger="every 2s"' in running.get_data(as_text=True)
    assert "25%" in running.get_data(as_text=True)
    export_file.succeed(export.id, attempt, size_bytes=10, row_count=200, retention_days=30)
    settled = client.get(url, headers=HTMX)
    assert settled.status_code == 286
    assert "hx-trigger" not in settled.get_data(as_text=True)
    assert "succeeded" in settled.get_data(as_text=True)


def test_a_file_requested_moments_ago_polls_every_half_second(client, auth, world):
    """A young file's progress fragment asks again in 500 ms, so a small file shows its outcome at once."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member, requested_at=utcnow())
    auth.login(world.member.email)
    fragment = client.get(_files_url(world, f"{export.id}/progress"), headers=HTMX)
    assert fragment.status_code == 200
    assert 'hx-trigger="every 500ms"' in fragment.get_data(as_text=True)


def test_the_detail_page_of_a_young_file_polls_every_half_second_until_it_is_older(client, auth, world):
    """The detail page polls quickly first; the same file, older than the fast window, polls every 2 s."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member, requested_at=utcnow())
    auth.login(world.member.email)
    assert 'hx-trigger="every 500ms"' in client.get(_files_url(world, str(export.id))).get_data(as_text=True)
    db.session.execute(
        update(ExportFile).where(ExportFile.id == export.id).values(requested_at=utcnow() - timedelta(seconds=6))
    )
    db.session.commit()
    assert 'hx-trigger="every 2s"' in client.get(_files_url(world, str(export.id))).get_data(as_text=True)


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_requesting_a_file_dispatches_it_before_the_response(client, auth, world):
    """By the time the request returns, the outbox row is claimed and its job is on the export queue."""
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    response = client.post(f"/w/{world.workspace.id}/queries/{query.id}/files", data={"format": "csv"})
    assert response.status_code == 302
    export = db.session.execute(select(ExportFile)).scalar_one()
    outbox = db.session.execute(select(ExportFileRequest)).scalar_one()
    assert outbox.export_id == export.id and outbox.dispatch_count == 1
    assert work_queue(WorkPriority.INTERACTIVE).get_job_ids() == [outbox.job_id]


def test_a_redis_outage_at_request_time_admits_the_file_and_the_dispatcher_sends_it_later(
    app, client, auth, world, monkeypatch, caplog
):
    """Redis unreachable during the request: the page still answers, the log says the periodic
    dispatcher will dispatch it, and once Redis is back its lost-job check enqueues the file."""
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    queues_unreachable(app, monkeypatch, _unused_port())
    with caplog.at_level(logging.WARNING, logger="app.services.work.queue"):
        response = client.post(f"/w/{world.workspace.id}/queries/{query.id}/files", data={"format": "csv"})
    monkeypatch.undo()
    assert response.status_code == 302
    export = db.session.execute(select(ExportFile)).scalar_one()
    assert export.status == "queued"
    assert "the periodic dispatcher will dispatch it again" in caplog.text
    assert work_queue(WorkPriority.INTERACTIVE).get_job_ids() == []

    assert redispatch_lost(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 1
    db.session.refresh(export.outbox)
    assert export.outbox.dispatch_count == 2
    assert work_queue(WorkPriority.INTERACTIVE).get_job_ids() == [export.outbox.job_id]


def test_download_streams_the_stored_bytes_with_safe_headers(client, auth, world):
    """The requester downloads exactly the stored bytes, as a CSV attachment with length and nosniff."""
    query = factories.make_query(world.workspace, world.member)
    content = "id,note\r\n1,'=1+2\r\n2,Дмитрий\r\n".encode() * 5000
    export = _succeeded(factories.make_export(query, world.member, file_name="hours-2026-11-02.csv"), content)
    auth.login(world.member.email)
    response = client.get(_files_url(world, f"{export.id}/download"))
    assert response.status_code == 200
    assert response.data == content
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert response.headers["Content-Length"] == str(len(content))
    assert response.headers["Content-Disposition"] == "attachment; filename=hours-2026-11-02.csv"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_download_of_an_xlsx_with_a_non_ascii_name_is_rfc5987_encoded(client, auth, world):
    """An XLSX download has the spreadsheet type, and a non-ASCII name travels as filename*=UTF-8''."""
    query = factories.make_query(world.workspace, world.member)
    export = _succeeded(
        factories.make_export(query, world.member, format="xlsx", file_name="Übersicht.xlsx"), b"PK\x03\x04 xlsx"
    )
    auth.login(world.member.email)
    response = client.get(_files_url(world, f"{export.id}/download"))
    assert response.headers["Content-Type"] == XLSX_TYPE
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("attachment; filename=Ubersicht.xlsx")
    assert "filename*=UTF-8''%C3%9Cbersicht.xlsx" in disposition


def test_download_of_an_expired_file_answers_410_with_how_to_get_a_new_one(client, auth, world):
    """Past its expiry a file shows as expired and its download answers 410 naming the date."""
    query = factories.make_query(world.workspace, world.member)
    export = _succeeded(factories.make_export(query, world.member), b"a,b\r\n")
    expired_at = utcnow() - timedelta(days=1)
    db.session.execute(update(ExportFile).where(ExportFile.id == export.id).values(expires_at=expired_at))
    db.session.commit()
    auth.login(world.member.email)
    response = client.get(_files_url(world, f"{export.id}/download"))
    page = response.get_data(as_text=True)
    assert response.status_code == 410
    assert f"expired on {expired_at:%Y-%m-%d}" in page
    assert "request a new file" in page
    assert "status-expired" in client.get(_files_url(world)).get_data(as_text=True)


def test_download_of_a_file_not_yet_made_answers_409(client, auth, world):
    """A queued file has nothing to download: 409 with a page saying it is not ready."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    auth.login(world.member.email)
    response = client.get(_files_url(world, f"{export.id}/download"))
    assert response.status_code == 409
    assert "This file is not ready" in response.get_data(as_text=True)


def test_another_persons_file_is_not_found_even_for_an_admin(client, auth, world):
    """A member's file answers 404 to an administrator on its page, progress and download."""
    query = factories.make_query(world.workspace, world.member)
    export = _succeeded(factories.make_export(query, world.member, source_name="Members own file"), b"private")
    auth.login(world.admin.email)
    for tail in (str(export.id), f"{export.id}/progress", f"{export.id}/download"):
        response = client.get(_files_url(world, tail))
        assert response.status_code == 404
        assert b"private" not in response.data
        assert b"Members own file" not in response.data


def test_running_file_page_shows_when_its_attempt_started(client, auth, world):
    """While a file runs, its page's live status says when the attempt started, without an attempt number at first."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    started = utcnow().replace(hour=3, minute=4)
    export_file.start(export.id, now=started)
    auth.login(world.member.email)

    fragment = client.get(_files_url(world, f"{export.id}/progress?view=detail"), headers=HTMX).get_data(as_text=True)

    assert f"started {started:%Y-%m-%d} 03:04 UTC" in fragment
    assert "· attempt" not in fragment


def test_restarted_file_page_shows_the_attempt_number(client, auth, world):
    """A file restarted after a stalled attempt shows the new attempt's start and its number, on the page and live."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    export_file.start(export.id)
    restarted = utcnow().replace(hour=5, minute=6)
    export_file.start(export.id, now=restarted)
    auth.login(world.member.email)

    page_and_fragment = (
        (_files_url(world, str(export.id)), None),
        (_files_url(world, f"{export.id}/progress?view=detail"), HTMX),
    )
    for url, headers in page_and_fragment:
        page = client.get(url, headers=headers).get_data(as_text=True)
        assert f"started {restarted:%Y-%m-%d} 05:06 UTC · attempt 2" in page


@pytest.mark.parametrize("code", list(FailureCode))
def test_every_failure_code_has_its_own_message_on_the_file_page(client, auth, world, code):
    """Each failure code a file can record is explained in words on its page, not with the generic fallback."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    export_file.fail(export.id, 0, code, "Recorded detail.")
    auth.login(world.member.email)

    page = client.get(_files_url(world, str(export.id))).get_data(as_text=True)

    assert f"<code>{code}</code>" in page
    assert "The file could not be made." not in page
