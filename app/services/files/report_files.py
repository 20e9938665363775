"""Admission of report files (INV-01, INV-03): the file row and its outbox request commit together.

A report file is PDF for every kind, or XLSX for `table` and `coded` reports; the form offers
only those and the database CHECK (ck_query_exports_source_shape) refuses the rest. The file
keeps the report reference, the report's version, and a copy of the print parameters with the
layout, plus the substituted request of the report's saved query, so the worker prints exactly
what was asked for, with the requester's access as it is when it runs.
"""

from __future__ import annotations

from datetime import date, datetime

from flask import current_app
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.access import RequesterContext
from app.domain.sources.print_params import PrintParams
from app.domain.sources.query_spec import substitute, validate_definition
from app.domain.sources.report_spec import code_sort_first, validate_layout
from app.domain.sources.stored_request import FileRequest
from app.extensions import db
from app.models import ExportFile, Report, SavedQuery
from app.models.export_file import FileFormat, FileKind
from app.models.report import ReportKind
from app.models.types import utcnow
from app.services.files.file_requests import admit, queued_export
from app.vocabulary import Heading

REPORT_FORMATS: dict[str, str] = {FileFormat.PDF: "PDF", FileFormat.XLSX: "Excel (XLSX)"}


def format_choices(report: Report) -> dict[str, str]:
    """The formats a file of this report can be requested in, with their labels."""
    return {fmt: REPORT_FORMATS[fmt] for fmt in report.formats}


def file_request(report: Report, query: SavedQuery, today: date) -> tuple[FileRequest, PrintParams]:
    """The request and print parameters a file of the report keeps, checked against its query now.

    The query may have changed since the report was saved: a layout naming a column the query
    no longer has is refused with a message rather than printed wrong.
    """
    settings = current_app.config["SETTINGS"]
    definition = validate_definition(query.definition(), settings.max_export_rows)
    try:
        layout = validate_layout(report.layout(), query.dataset, list(query.columns))
    except ValidationError as exc:
        raise ValidationError(
            f"The report no longer fits its query “{query.name}”: {exc} Edit the report.", "format"
        ) from None
    request = substitute(definition, today)
    if layout.kind == ReportKind.CODED:
        assert layout.code_column is not None
        request = code_sort_first(request, layout.code_column)
    return request, PrintParams(**report.print_params(), layout=layout)


def queued_report_file(
    access: RequesterContext,
    report: Report,
    query: SavedQuery,
    file_format: str,
    requested_at: datetime,
    request_token: str | None = None,
) -> ExportFile:
    """A queued file of the report for the requester, not yet admitted: the request of its query
    on `requested_at`'s day and its print parameters, checked against the query now (file_request).
    A person's request (request_report_file) and a schedule's run both build their file here."""
    request, print_params = file_request(report, query, requested_at.date())
    return queued_export(
        access,
        query,
        source_name=report.name,
        source_version=report.version,
        request=request,
        file_format=file_format,
        requested_at=requested_at,
        kind=FileKind.REPORT,
        report_id=report.id,
        report_kind=report.kind,
        print_params=print_params.to_json(),
        heading=Heading.LABELS,
        include_descriptions=False,
        request_token=request_token,
    )


def request_report_file(
    access: RequesterContext,
    report: Report,
    file_format: str,
    request_key: str | None = None,
    dispatch_now: bool = True,
) -> ExportFile:
    """Admit a file of the report in `file_format` (pdf, or xlsx for table and coded reports).

    `request_key` is the request form's key (text_rules.request_key): a form sent again with the
    same format answers its first file.
    """
    if report.workspace_id != access.workspace_id:
        raise AccessDenied("That report is not in this workspace.")
    query = db.session.get(SavedQuery, report.source_query_id)
    if query is None or query.workspace_id != access.workspace_id:
        raise ValidationError("The report's saved query is gone.", "format")
    if not access.can_read_dataset(query.dataset):
        raise AccessDenied("You do not have access to this report's dataset.")
    if file_format not in report.formats:
        allowed = " or ".join(REPORT_FORMATS[f] for f in report.formats)
        raise ValidationError(f"A {report.kind} report can be requested as {allowed}.", "format")
    export = queued_report_file(access, report, query, file_format, utcnow(), request_token=request_key)
    try:
        return admit(export, dispatch_now)
    except IntegrityError:
        # The report's foreign key (admit answers a repeated form itself): the report was deleted
        # between loading it and admitting its file.
        db.session.rollback()
        raise ValidationError("The report was deleted meanwhile, so no file was requested.", "format") from None


def recent_files(access: RequesterContext, report_id: int, limit: int = 10) -> list[ExportFile]:
    """The person's own latest files of the report (files are read by their requester only)."""
    return list(
        db.session.execute(
            select(ExportFile)
            .where(
                ExportFile.workspace_id == access.workspace_id,
                ExportFile.requester_id == access.person_id,
                ExportFile.report_id == report_id,
            )
            .order_by(ExportFile.requested_at.desc(), ExportFile.id.desc())
            .limit(limit)
        ).scalars()
    )
