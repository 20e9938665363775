"""Report files requested on the report page travel outbox → RQ → a real worker → storage → download."""

from __future__ import annotations

import io
import re
from decimal import Decimal

from openpyxl import load_workbook
from sqlalchemy import func, select

from app.extensions import db
from app.models import ExportFile, Report, TimesheetEntry
from tests.fixtures.workers import file_row, pending_uploads, wait_for


def _request_on_the_page(client, world, report, file_format: str) -> ExportFile:
    response = client.post(f"/w/{world.workspace.id}/reports/{report.id}/files", data={"format": file_format})
    assert response.status_code == 302
    return db.session.execute(select(ExportFile).order_by(ExportFile.id.desc()).limit(1)).scalar_one()


def _file_made_by_a_worker(
    client, auth, kit, start_worker, kind: str, file_format: str, rows: int
) -> tuple[Report, ExportFile]:
    """Add `rows` rows, request a file of a new `kind` report on its page and wait for a real worker to make it."""
    kit.add_rows(rows)
    report = kit.report(kind=kind)
    auth.login(kit.world.member.email)
    export = _request_on_the_page(client, kit.world, report, file_format)
    start_worker()

    # The page's request dispatched the file already; no periodic dispatcher runs here.
    wait_for(lambda: file_row(export.id).is_settled, timeout=90, what="the report file to settle")

    produced = file_row(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    return report, produced


def _team_sums(workspace_id: int) -> dict[str, tuple[int, Decimal]]:
    rows = db.session.execute(
        select(TimesheetEntry.team_name, func.count(), func.sum(TimesheetEntry.hours))
        .where(TimesheetEntry.workspace_id == workspace_id)
        .group_by(TimesheetEntry.team_name)
    ).all()
    return {team: (count, hours) for team, count, hours in rows}


def test_a_worker_renders_a_coded_pdf_that_downloads_with_sql_subtotals(
    client, auth, kit, isolated_storage, start_worker, read_pdf
):
    """Coded PDF: queued → running → succeeded by a real worker; the download's subtotals equal SQL's."""
    report, produced = _file_made_by_a_worker(client, auth, kit, start_worker, "coded", "pdf", rows=200)
    assert isolated_storage.list_keys("files/") == [produced.storage_key]
    assert pending_uploads(isolated_storage) == []
    files_page = client.get(f"/w/{kit.world.workspace.id}/files/").get_data(as_text=True)
    assert report.name in files_page and "succeeded" in files_page
    download = client.get(f"/w/{kit.world.workspace.id}/files/{produced.id}/download")
    assert download.status_code == 200 and download.mimetype == "application/pdf"
    text = " ".join(read_pdf(download.data, "layout").split())
    for team, (count, hours) in _team_sums(kit.world.workspace.id).items():
        assert re.search(rf"Subtotal {team} · {count:,} rows {hours:,.2f}", text), team
    assert "Page 1 of" in text


def test_a_worker_writes_a_table_xlsx_equal_to_the_database(client, auth, kit, isolated_storage, start_worker):
    """Table XLSX through the real job path: every id and hours value equals the database's."""
    _report, produced = _file_made_by_a_worker(client, auth, kit, start_worker, "table", "xlsx", rows=120)
    download = client.get(f"/w/{kit.world.workspace.id}/files/{produced.id}/download")
    sheet = load_workbook(io.BytesIO(download.data)).active
    rows = [row for row in sheet.iter_rows(values_only=True) if isinstance(row[0], int)]
    expected = db.session.execute(
        select(TimesheetEntry.id, TimesheetEntry.hours)
        .where(TimesheetEntry.workspace_id == kit.world.workspace.id)
        .order_by(TimesheetEntry.id)
    ).all()
    assert [(row[0], Decimal(str(row[3]))) for row in rows] == [tuple(e) for e in expected]
    assert produced.row_count == len(expected)
