"""Admission of report files: what the file keeps, which formats are allowed, and the database's CHECK."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.domain.errors import ValidationError
from app.extensions import db
from app.models import ExportFile, ExportFileRequest, Report
from app.services.schedules import source_removal
from tests.fixtures.workers import file_row


def test_report_file_keeps_report_reference_version_print_params_and_request(kit):
    """The file records the report, its kind and version, the print parameters with the layout, and the request."""
    query = kit.query(parameters=[{"column": "work_date", "range": "last_7_days"}])
    report = kit.report(query, kind="coded")
    export = kit.request(report, "pdf")

    stored = file_row(export.id)
    assert (stored.kind, stored.format, stored.status) == ("report", "pdf", "queued")
    assert (stored.report_id, stored.report_kind, stored.source_version) == (report.id, "coded", report.version)
    assert stored.source_name == report.name and stored.source_query_id == query.id
    assert stored.print_params["title"] == report.title
    assert stored.print_params["page_size"] == "A4" and stored.print_params["orientation"] == "portrait"
    assert stored.print_params["layout"]["code_column"] == "team_name"
    assert stored.request["sort"][0] == {"column": "team_name", "direction": "asc"}
    assert stored.request["parameters_applied"][0]["range"] == "last_7_days"
    assert any(f["column"] == "work_date" and f["op"] == "between" for f in stored.request["filters"])
    assert stored.storage_key.startswith(f"files/w{report.workspace_id}/") and stored.storage_key.endswith(".pdf")
    assert stored.file_name.endswith(".pdf")
    assert db.session.scalar(select(func.count()).where(ExportFileRequest.export_id == export.id)) == 1


def test_summary_report_refuses_xlsx_with_a_message(kit):
    """The service offers XLSX for table and coded reports only."""
    report = kit.report(kind="summary", summary={"group_column": None, "figures": [{"function": "count"}]})
    with pytest.raises(ValidationError) as caught:
        kit.request(report, "xlsx")
    assert "PDF" in str(caught.value)
    assert db.session.scalar(select(func.count()).select_from(ExportFile)) == 0


def test_database_check_refuses_xlsx_for_a_summary_report(kit):
    """INV-03: even written directly, an XLSX summary file is refused by ck_query_exports_source_shape."""
    report = kit.report(kind="table")
    export = kit.request(report, "pdf")
    db.session.execute(
        ExportFile.__table__.update().where(ExportFile.id == export.id).values(report_kind="table", format="xlsx")
    )
    db.session.commit()
    with pytest.raises(IntegrityError) as caught:
        db.session.execute(
            ExportFile.__table__.update().where(ExportFile.id == export.id).values(report_kind="summary")
        )
        db.session.commit()
    db.session.rollback()
    assert "ck_query_exports_source_shape" in str(caught.value)


def test_a_report_that_no_longer_fits_its_query_is_refused(kit):
    """When the query dropped a column the report prints, requesting a file says so and admits nothing."""
    query = kit.query()
    report = kit.report(query, kind="table")
    query.columns = ["id", "person_name", "work_date", "hours"]
    db.session.commit()
    with pytest.raises(ValidationError) as caught:
        kit.request(report)
    assert "no longer fits its query" in str(caught.value)
    assert db.session.scalar(select(func.count()).select_from(ExportFile)) == 0


def test_deleting_a_report_keeps_its_files_with_the_reference_cleared(kit):
    """Files of a removed report stay, with report_id NULL and their name, kind and print parameters."""
    report = kit.report(kind="table")
    pdf, xlsx = kit.request(report, "pdf"), kit.request(report, "xlsx")
    access = kit.access(kit.world.admin)

    source_removal.delete_report(access, report)

    for export_id in (pdf.id, xlsx.id):
        kept = file_row(export_id)
        assert kept.report_id is None
        assert kept.source_name == report.name and kept.report_kind == "table"
        assert kept.print_params["title"] == report.title


def test_a_report_deleted_while_its_file_is_requested_admits_nothing(kit):
    """The foreign key decides a race with a delete: a message, and no file or outbox row."""
    report = kit.report(kind="table")
    report.layout()  # loaded, as the page had it before someone else deleted the report
    with db.engine.begin() as connection:
        connection.execute(Report.__table__.delete().where(Report.id == report.id))
    with pytest.raises(ValidationError) as caught:
        kit.request(report)
    assert "deleted meanwhile" in str(caught.value)
    assert db.session.scalar(select(func.count()).select_from(ExportFile)) == 0
    assert db.session.scalar(select(func.count()).select_from(ExportFileRequest)) == 0
