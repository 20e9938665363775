"""A requested file travels outbox → RQ → a real worker → storage, on both storage backends."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

from sqlalchemy import select

from app.extensions import db
from app.models import TimesheetEntry
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from tests.fixtures.s3 import PART_SIZE, PREFIX
from tests.fixtures.workers import EXPORTED_COLUMNS, file_row, pending_uploads, wait_for


def _settled(export_id: int) -> bool:
    return file_row(export_id).is_settled


def _parse_csv(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def _expected_rows(scenario) -> list[list[object]]:
    entries = db.session.execute(
        select(TimesheetEntry.id, TimesheetEntry.person_name, TimesheetEntry.hours, TimesheetEntry.note)
        .where(TimesheetEntry.workspace_id == scenario.workspace.id)
        .order_by(TimesheetEntry.id)
    ).all()
    return [list(entry) for entry in entries]


def _typed(rows: list[list[str]]) -> list[list[object]]:
    return [[int(row[0]), row[1], Decimal(row[2]), row[3]] for row in rows]


def test_worker_produces_requested_csv_into_the_storage_folder(export_scenario, isolated_storage, start_worker):
    """An admitted CSV file is dispatched, produced by a real worker, and stored whole at its fixed key."""
    export_scenario.add_timesheet_rows(40)
    export = export_scenario.request_file("csv")
    key = export.storage_key
    start_worker()

    assert dispatch_pending(FILES) == 1
    wait_for(lambda: _settled(export.id), what="the file to settle")

    produced = file_row(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    assert produced.storage_key == key
    assert produced.row_count == 40
    assert produced.expires_at == produced.completed_at + timedelta(days=30)
    assert isolated_storage.list_keys("files/") == [key]
    assert produced.size_bytes == isolated_storage.size(key)
    rows = _parse_csv(b"".join(isolated_storage.read_chunks(key)))
    assert rows[0] == EXPORTED_COLUMNS
    assert _typed(rows[1:]) == _expected_rows(export_scenario)
    assert pending_uploads(isolated_storage) == []


def test_worker_produces_requested_csv_into_s3_in_several_parts(
    export_scenario, storage_on_s3, s3_client, start_worker
):
    """Through moto's S3 server the file is uploaded in several parts, completed, and no upload is left open."""
    _, bucket = storage_on_s3
    export_scenario.add_timesheet_rows(300)
    export = export_scenario.request_file("csv")
    start_worker()

    assert dispatch_pending(FILES) == 1
    wait_for(lambda: _settled(export.id), what="the file to settle")

    produced = file_row(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    assert produced.row_count == 300
    assert produced.size_bytes > 3 * PART_SIZE
    listed = s3_client.list_objects_v2(Bucket=bucket, Prefix=f"{PREFIX}/files/")["Contents"]
    assert [item["Key"] for item in listed] == [f"{PREFIX}/{produced.storage_key}"]
    assert listed[0]["Size"] == produced.size_bytes
    parts = -(-produced.size_bytes // PART_SIZE)
    assert listed[0]["ETag"].strip('"').endswith(f"-{parts}")  # a multipart object's ETag counts its parts
    stored = s3_client.get_object(Bucket=bucket, Key=f"{PREFIX}/{produced.storage_key}")["Body"].read()
    rows = _parse_csv(stored)
    assert rows[0] == EXPORTED_COLUMNS
    assert _typed(rows[1:]) == _expected_rows(export_scenario)
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
