"""The report renderer's pre-render checks and limits, run in this process: queued → failed, nothing stored."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, func, select, update

from app.domain.files import export_file
from app.extensions import db
from app.models import ExportFile, Membership, Report, TimesheetEntry
from app.services.files.export_runner import run_export_file
from tests.fixtures.workers import file_row, pending_uploads


def _assert_failed_before_start(export_id: int, code: str, storage) -> None:
    failed = file_row(export_id)
    assert (failed.status, failed.failure_code) == ("failed", code)
    assert failed.started_at is None and failed.attempt_count == 0
    assert storage.list_keys("files/") == []
    assert pending_uploads(storage) == []


def test_requester_removed_from_the_workspace_fails_with_access_lost(kit, isolated_storage):
    """A member removed before the job ran: the report file goes queued → failed/access_lost, unrendered."""
    export = kit.request(kit.report(kind="coded"), person=kit.world.member)
    db.session.execute(delete(Membership).where(Membership.id == kit.world.member_membership.id))
    db.session.commit()

    assert run_export_file(export.id) == "access_lost"
    _assert_failed_before_start(export.id, "access_lost", isolated_storage)


def test_requester_who_lost_the_dataset_grant_fails_with_access_lost(kit, isolated_storage):
    """The dataset grant is re-read when the job runs; without it nothing is rendered."""
    export = kit.request(kit.report(kind="table"), "xlsx", person=kit.world.member)
    db.session.execute(
        update(Membership).where(Membership.id == kit.world.member_membership.id).values(dataset_grants=["teams"])
    )
    db.session.commit()

    assert run_export_file(export.id) == "access_lost"
    _assert_failed_before_start(export.id, "access_lost", isolated_storage)
    assert "Timesheet entries" in file_row(export.id).failure_detail


def test_report_deleted_before_the_job_ran_fails_with_source_missing(kit, isolated_storage):
    """Deleting the report clears the file's reference; the renderer then fails it with source_missing."""
    report = kit.report(kind="summary", summary={"group_column": None, "figures": [{"function": "count"}]})
    export = kit.request(report)
    db.session.execute(delete(Report).where(Report.id == report.id))
    db.session.commit()

    assert run_export_file(export.id) == "source_missing"
    _assert_failed_before_start(export.id, "source_missing", isolated_storage)
    failed = file_row(export.id)
    assert failed.report_id is None and failed.source_name == report.name
    assert "report" in failed.failure_detail


@pytest.mark.environment(REPORT_PDF_MAX_ROWS="10")
def test_pdf_over_the_row_limit_fails_with_too_many_rows_and_suggests_xlsx(kit, isolated_storage):
    """REPORT_PDF_MAX_ROWS caps a PDF: the file fails with too_many_rows, a message naming XLSX, no object."""
    storage = isolated_storage
    export = kit.request(kit.report(kind="table"))

    assert run_export_file(export.id) == "too_many_rows"

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code) == ("failed", "too_many_rows")
    assert "at most 10" in failed.failure_detail and "XLSX" in failed.failure_detail
    assert storage.list_keys("files/") == []
    assert pending_uploads(storage) == []


@pytest.mark.environment(REPORT_PDF_MAX_ROWS="10")
def test_xlsx_is_not_held_to_the_pdf_row_limit(kit, isolated_storage):
    """The same report as Excel succeeds past the PDF limit."""
    storage = isolated_storage
    export = kit.request(kit.report(kind="coded"), "xlsx")

    assert run_export_file(export.id) == "succeeded"
    produced = file_row(export.id)
    assert produced.row_count > 10
    assert storage.list_keys("files/") == [produced.storage_key]


def test_a_succeeded_report_file_records_rows_size_and_expiry(kit, isolated_storage):
    """The settled file counts the rows it printed, and its size is the stored object's."""
    kit.add_rows(30)
    export = kit.request(kit.report(kind="table"))

    assert run_export_file(export.id) == "succeeded"
    produced = file_row(export.id)
    expected = db.session.scalar(
        select(func.count()).select_from(TimesheetEntry).where(TimesheetEntry.workspace_id == kit.world.workspace.id)
    )
    assert produced.row_count == produced.rows_written == expected
    assert produced.size_bytes == isolated_storage.size(produced.storage_key)
    assert produced.expires_at is not None and produced.started_at is not None


def test_a_redelivered_running_report_file_restarts_into_the_same_key(kit, isolated_storage):
    """running → running: a second delivery renders again into the fixed key and settles once."""
    export = kit.request(kit.report(kind="coded"), "pdf")
    export_file.start(export.id)

    assert run_export_file(export.id) == "succeeded"
    produced = file_row(export.id)
    assert produced.attempt_count == 2
    assert isolated_storage.list_keys("files/") == [produced.storage_key]
    assert run_export_file(export.id) == "already_settled"
    assert file_row(export.id).completed_at == produced.completed_at


def test_stored_print_parameters_not_in_their_shape_fail_the_file_with_invalid_request(kit, isolated_storage):
    """A coded report file whose stored layout lost its code column fails with a message naming it,
    not as an unexpected error, and stores nothing."""
    export = kit.request(kit.report(kind="coded"), "pdf")
    damaged = {**export.print_params, "layout": {**export.print_params["layout"]}}
    del damaged["layout"]["code_column"]
    db.session.execute(update(ExportFile).where(ExportFile.id == export.id).values(print_params=damaged))
    db.session.commit()

    assert run_export_file(export.id) == "invalid_request"

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code) == ("failed", "invalid_request")
    assert "The stored print parameters cannot be read: layout.code_column" in failed.failure_detail
    assert isolated_storage.list_keys("files/") == []
    assert pending_uploads(isolated_storage) == []
