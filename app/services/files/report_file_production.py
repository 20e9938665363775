"""Producing a report file: a report's rows printed as PDF (table, coded, summary) or Excel
(table, coded). The use case export_runner calls for a file of kind `report`.

The file row carries everything needed, fixed at admission: the substituted request of the
report's saved query (`request`, read as a FileRequest; for a coded report the code column sorts
first), and the print parameters with the report's layout (`print_params`, read as PrintParams
with its ReportLayout). Rows stream from the
query runner with the requester's current access; the aggregates a report needs (rows per code,
summary figures) come from app/data/report_aggregates.py; the writers in app/rendering take the
rows and give the bytes, counting what they had to change in `warnings`. Each format's writer is a
module of its own (report_pdf_production, report_xlsx_production), imported only for a file in
that format.

Dates print in the workspace's own format (Workspace.date_format). Identifiers (id columns)
print as they are and are never added up; the other numbers are right-aligned, formatted and,
in a coded report, subtotalled exactly.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.data.query_runner import request_columns, request_dataset
from app.data.report_aggregates import MAX_CHART_BARS, summary_figures
from app.domain.people.access import RequesterContext
from app.domain.sources.catalog import Column, Dataset
from app.domain.sources.print_params import PrintParams, ReportLayout
from app.domain.sources.query_spec import VALUELESS, operator_phrase
from app.domain.sources.report_spec import is_identifier
from app.domain.sources.stored_request import FileRequest
from app.models import ExportFile
from app.models.export_file import FileFormat
from app.models.types import utcnow
from app.rendering import ByteSink
from app.rendering.pdf import Group, PdfColumn, PdfLayout, format_date, format_datetime, format_value
from app.rendering.row_digest import RowDigest, WrittenRows
from app.services.files.file_requests import workspace_dates

Progress = Callable[[int, int | None], None]

NO_CODE = "(none)"


# --------------------------------------------------------------------------- shared pieces


def printed_columns(dataset: Dataset, layout: ReportLayout) -> list[PdfColumn]:
    """The report's columns for the page: label, type, alignment and width (percent of the page)."""
    specs = layout.columns
    given = sum(spec.width for spec in specs if spec.width is not None)
    unsized = sum(1 for spec in specs if spec.width is None)
    share = max(100 - given, 0) / unsized if unsized and given < 100 else None
    columns = []
    for spec in specs:
        column = dataset.column(spec.name)
        assert column is not None, spec.name
        width = spec.width if spec.width is not None else share
        if is_identifier(column):
            columns.append(PdfColumn(column.name, column.label, "text", width, align="right"))
        else:
            columns.append(PdfColumn(column.name, column.label, column.type, width))
    return columns


def projector(request: FileRequest, names: Sequence[str]) -> Callable[[tuple], tuple]:
    """Picks the report's columns, in its order, out of a row of the query's columns."""
    positions = {column.name: index for index, column in enumerate(request_columns(request))}
    indexes = [positions[name] for name in names]
    return lambda row: tuple(row[i] for i in indexes)


def code_text(column: PdfColumn, value: Any, layout: PdfLayout) -> str:
    return NO_CODE if value is None else format_value(column, value, layout) or NO_CODE


def code_description(descriptions: dict[str, str], value: Any, text: str) -> str:
    """The description typed for the code, found by the code as printed or as stored."""
    if value is None:
        return descriptions.get(NO_CODE, "")
    return descriptions.get(text) or descriptions.get(str(value), "")


def coded_groups(
    rows: Iterable[tuple],
    request: FileRequest,
    layout: ReportLayout,
    dataset: Dataset,
    page: PdfLayout,
    counts: dict[Any, int],
) -> Iterator[Group]:
    """The rows (sorted by code) cut into one group per code, each row projected to the report's columns."""
    assert layout.code_column is not None
    code = dataset.column(layout.code_column)
    assert code is not None
    code_column = PdfColumn(code.name, code.label, code.type)
    code_index = [c.name for c in request_columns(request)].index(code.name)
    project = projector(request, layout.column_names)
    descriptions = layout.code_descriptions
    for value, group_rows in itertools.groupby(rows, key=lambda row: row[code_index]):
        text = code_text(code_column, value, page)
        yield Group(
            code=text,
            description=code_description(descriptions, value, text),
            rows=map(project, group_rows),
            row_count=counts.get(value),
        )


def _value_text(column: Column, value: Any, date_format: str, time_zone: str) -> str:
    if column.type == "date":
        return format_date(value, date_format)
    if column.type == "datetime":
        return format_datetime(value, f"{date_format} %H:%M", time_zone=time_zone)
    return str(value)


def filters_text(request: FileRequest, dataset: Dataset, date_format: str, time_zone: str = "UTC") -> str:
    """The filters the rows were chosen by, in words, for the page's title block."""
    parts = []
    for condition in request.filters:
        column = dataset.column(condition.column)
        if column is None:
            continue
        operator = operator_phrase(column.type, condition.op)
        value = condition.value
        if condition.op in VALUELESS:
            parts.append(f"{column.label} {operator}")
        elif condition.op == "between" and isinstance(value, tuple):
            low, high = (_value_text(column, v, date_format, time_zone) for v in value)
            parts.append(f"{column.label} between {low} and {high}")
        elif isinstance(value, tuple):
            listed = ", ".join(_value_text(column, v, date_format, time_zone) for v in value)
            parts.append(f"{column.label} {operator} {listed}")
        else:
            parts.append(f"{column.label} {operator} {_value_text(column, value, date_format, time_zone)}")
    text = "Filters: " + ("; ".join(parts) if parts else "none, all rows")
    filtered_types = {column.type for f in request.filters if (column := dataset.column(f.column))}
    if "datetime" in filtered_types:
        text += f" (times in {time_zone})"
    if request.row_limit is not None:
        text += f" (at most {request.row_limit:,} rows)"
    return text


def pdf_layout(
    print_params: PrintParams,
    request: FileRequest,
    dataset: Dataset,
    date_format: str,
    now: datetime,
    time_zone: str = "UTC",
) -> PdfLayout:
    """The page: dates in the workspace's format, times on its zone's clocks with the zone named."""
    return PdfLayout(
        title=print_params.title,
        subtitle=print_params.subtitle,
        page_size=print_params.page_size,
        orientation=print_params.orientation,
        filters_text=filters_text(request, dataset, date_format, time_zone) if print_params.show_filters else None,
        generated_at=now if print_params.show_generated_at else None,
        date_format=date_format,
        time_format=f"%H:%M {time_zone}",
        time_zone=time_zone,
    )


def report_page(print_params: PrintParams, request: FileRequest, workspace_id: int) -> PdfLayout:
    """The page a report prints on, with the workspace's date format and zone, and the time now."""
    dataset = request_dataset(request)
    dates = workspace_dates(workspace_id)
    return pdf_layout(print_params, request, dataset, dates.date_format, utcnow(), dates.time_zone)


# --------------------------------------------------------------------------- summary figures


@dataclass(frozen=True)
class Summary:
    rows: int
    figures: list[tuple[str, Any]]
    chart: list[tuple[str, Any]]
    chart_title: str | None


def summarise(
    request: FileRequest, access: RequesterContext, layout: ReportLayout, dataset: Dataset, page: PdfLayout
) -> Summary:
    """Headline figures over all the rows, and the bar chart: the first figure per group (the
    largest groups when there are many), or each figure when the rows are not grouped."""
    summary = layout.summary
    assert summary is not None
    figures = summary.figures
    read = summary_figures(request, access, summary)
    values = [(f.label, value) for f, value in zip(figures, read.figures, strict=True)]
    group_name = summary.group_column
    if not group_name:
        chart = values if len(values) > 1 else []
        return Summary(read.rows, values, chart, "Figures" if chart else None)
    group = dataset.column(group_name)
    assert group is not None
    group_column = PdfColumn(group.name, group.label, group.type)
    chart = [(code_text(group_column, code, page), value or 0) for code, value in read.bars]
    title = f"{figures[0].label} by {group.label}"
    if read.group_count > MAX_CHART_BARS:
        title += f" (the {MAX_CHART_BARS} largest of {read.group_count:,})"
    return Summary(read.rows, values, chart, title)


# --------------------------------------------------------------------------- files


@dataclass(frozen=True)
class ReportPrinting:
    """One report file being written, whichever its format: the request its rows answer and the
    access they are read with, the report's layout and page, and where the bytes, the progress and
    the writers' warnings go."""

    request: FileRequest
    access: RequesterContext
    layout: ReportLayout
    page: PdfLayout
    out: ByteSink
    progress: Progress
    warnings: Counter
    time_zone: str
    # Fed with the rows the report reads, as they stream to its writer (a summary's figures instead).
    digest: RowDigest


def report_writer(file_format: FileFormat) -> Callable[[ReportPrinting], int]:
    """The writer of a report in this format. Its module is imported here, when a file first needs
    it: a PDF's loads reportlab and the shaping libraries, an XLSX's openpyxl, and a job loads only
    its own file's (tests/unit/architecture/test_job_imports.py)."""
    if file_format == FileFormat.PDF:
        from app.services.files.report_pdf_production import write_report_pdf

        return write_report_pdf
    from app.services.files.report_xlsx_production import write_report_xlsx_file

    return write_report_xlsx_file


def write_report_file(
    export: ExportFile, access: RequesterContext, out: ByteSink, progress: Progress, warnings: Counter
) -> WrittenRows:
    """Write the report file's bytes to `out`; returns the number of data rows it presents and their
    digest (app/rendering/row_digest.py).
    What the writers had to change (a glyph no font has, a clipped or cut cell) is counted in
    `warnings`. Raises ValidationError when the stored request or print parameters are not in
    their shape."""
    request = FileRequest.from_json(export.request)
    print_params = PrintParams.from_json(export.print_params)
    page = report_page(print_params, request, export.workspace_id)
    digest = RowDigest(request_columns(request))
    printing = ReportPrinting(
        request, access, print_params.layout, page, out, progress, warnings, export.time_zone, digest
    )
    return WrittenRows(report_writer(FileFormat(export.format))(printing), digest.hexdigest())
