"""Report files: a report's rows printed as PDF (table, coded, summary) or Excel (table, coded).

The file row carries everything the renderer needs, fixed at admission: the substituted
request of the report's saved query (`request`; for a coded report the code column sorts
first), and the print parameters with the report's layout (`print_params`, layout under
"layout"). Rows stream from query_runner with the requester's current access; memory holds one
PDF chunk or one spreadsheet row at a time, plus the row count of each code of a coded report.

Dates print in the workspace's own format (Workspace.date_format). Identifiers (id columns)
print as they are and are never added up; the other numbers are right-aligned, formatted and,
in a coded report, subtotalled. Spreadsheet cells are values with number formats, never
formulas, and text is neutralised against formula injection.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, BinaryIO

from flask import current_app
from sqlalchemy import Select, func, select

from app.data.query_runner import build_select, count_rows, iter_rows, request_columns, request_dataset
from app.domain.access import RequesterContext
from app.domain.catalog import Column, Dataset
from app.domain.query_spec import OPERATORS, VALUELESS
from app.domain.report_spec import is_identifier
from app.extensions import db
from app.models import QueryExport, Workspace
from app.models.types import utcnow
from app.rendering import TooManyRows
from app.rendering.pdf import (
    Group,
    PdfColumn,
    PdfLayout,
    PdfTooLarge,
    format_value,
    render_grouped_pdf,
    render_summary_pdf,
    render_table_pdf,
)

Progress = Callable[[int, int | None], None]

NO_CODE = "(none)"
MAX_CHART_BARS = 30


# --------------------------------------------------------------------------- shared pieces


def printed_columns(dataset: Dataset, layout: dict) -> list[PdfColumn]:
    """The report's columns for the page: label, type, alignment and width (percent of the page)."""
    specs = layout["columns"]
    given = sum(spec["width"] for spec in specs if spec.get("width") is not None)
    unsized = sum(1 for spec in specs if spec.get("width") is None)
    share = max(100 - given, 0) / unsized if unsized and given < 100 else None
    columns = []
    for spec in specs:
        column = dataset.column(spec["name"])
        assert column is not None, spec["name"]
        width = spec.get("width") if spec.get("width") is not None else share
        if is_identifier(column):
            columns.append(PdfColumn(column.name, column.label, "text", width, align="right"))
        else:
            columns.append(PdfColumn(column.name, column.label, column.type, width))
    return columns


def projector(request: dict, names: Sequence[str]) -> Callable[[tuple], tuple]:
    """Picks the report's columns, in its order, out of a row of the query's columns."""
    positions = {column.name: index for index, column in enumerate(request_columns(request))}
    indexes = [positions[name] for name in names]
    return lambda row: tuple(row[i] for i in indexes)


def _select_for_aggregates(request: dict, access: RequesterContext) -> Select:
    """The request's rows as a subquery to aggregate; the order only matters under a row limit."""
    statement = build_select(request, access)
    return statement if request.get("row_limit") is not None else statement.order_by(None)


def code_text(column: PdfColumn, value: Any, layout: PdfLayout) -> str:
    return NO_CODE if value is None else format_value(column, value, layout) or NO_CODE


def code_description(descriptions: dict[str, str], value: Any, text: str) -> str:
    """The description typed for the code, found by the code as printed or as stored."""
    if value is None:
        return descriptions.get(NO_CODE, "")
    return descriptions.get(text) or descriptions.get(str(value), "")


def group_counts(request: dict, access: RequesterContext, code_column: str) -> dict[Any, int]:
    """Rows per code, so each group's heading can give its count before its rows stream by."""
    rows = _select_for_aggregates(request, access).subquery()
    code = rows.c[code_column]
    return dict(db.session.execute(select(code, func.count()).select_from(rows).group_by(code)).tuples().all())


def _date_format(workspace_id: int) -> str:
    return db.session.execute(select(Workspace.date_format).where(Workspace.id == workspace_id)).scalar_one()


def _value_text(column: Column, value: Any, date_format: str) -> str:
    if column.type == "date":
        return date.fromisoformat(str(value)).strftime(date_format)
    if column.type == "datetime":
        return datetime.fromisoformat(str(value)).strftime(f"{date_format} %H:%M")
    return str(value)


def filters_text(request: dict, dataset: Dataset, date_format: str) -> str:
    """The filters the rows were chosen by, in words, for the page's title block."""
    parts = []
    for raw in request.get("filters") or []:
        column = dataset.column(raw["column"])
        if column is None:
            continue
        operator = OPERATORS[column.type].get(raw["op"], raw["op"]).replace(" (comma-separated)", "")
        value = raw.get("value")
        if raw["op"] in VALUELESS:
            parts.append(f"{column.label} {operator}")
        elif raw["op"] == "between":
            low, high = (_value_text(column, v, date_format) for v in value)
            parts.append(f"{column.label} between {low} and {high}")
        elif isinstance(value, list):
            parts.append(f"{column.label} {operator} {', '.join(_value_text(column, v, date_format) for v in value)}")
        else:
            parts.append(f"{column.label} {operator} {_value_text(column, value, date_format)}")
    text = "Filters: " + ("; ".join(parts) if parts else "none, all rows")
    if request.get("row_limit") is not None:
        text += f" (at most {request['row_limit']:,} rows)"
    return text


def pdf_layout(print_params: dict, request: dict, dataset: Dataset, date_format: str, now: datetime) -> PdfLayout:
    return PdfLayout(
        title=print_params["title"],
        subtitle=print_params.get("subtitle") or "",
        page_size=print_params["page_size"],
        orientation=print_params["orientation"],
        filters_text=filters_text(request, dataset, date_format) if print_params.get("show_filters") else None,
        generated_at=now if print_params.get("show_generated_at") else None,
        date_format=date_format,
        time_format="%H:%M UTC",
    )


# --------------------------------------------------------------------------- summary figures


@dataclass(frozen=True)
class Summary:
    rows: int
    figures: list[tuple[str, Any]]
    chart: list[tuple[str, Any]]
    chart_title: str | None


def _figure_expression(rows, figure: dict):
    if figure["function"] == "count":
        return func.count()
    return getattr(func, figure["function"])(rows.c[figure["column"]])


def _figure_value(figure: dict, value: Any) -> Any:
    """Averages to two decimals; the other figures as the database gave them."""
    if figure["function"] == "avg" and value is not None:
        return Decimal(value).quantize(Decimal("0.01"))
    return value


def summarise(request: dict, access: RequesterContext, layout: dict, dataset: Dataset, page: PdfLayout) -> Summary:
    """Headline figures over all the rows, and the bar chart: the first figure per group (the
    largest groups when there are many), or each figure when the rows are not grouped."""
    summary = layout["summary"]
    figures = summary["figures"]
    rows = _select_for_aggregates(request, access).subquery()
    overall = db.session.execute(
        select(func.count(), *[_figure_expression(rows, f) for f in figures]).select_from(rows)
    ).one()
    values = [(f["label"], _figure_value(f, v)) for f, v in zip(figures, overall[1:], strict=True)]
    group_name = summary.get("group_column")
    if not group_name:
        chart = values if len(values) > 1 else []
        return Summary(overall[0], values, chart, "Figures" if chart else None)

    group = dataset.column(group_name)
    assert group is not None
    group_column = PdfColumn(group.name, group.label, group.type)
    first = figures[0]
    expression = _figure_expression(rows, first)
    group_count = db.session.execute(select(func.count(rows.c[group.name].distinct())).select_from(rows)).scalar_one()
    ordering = (expression.desc(), rows.c[group.name]) if group_count > MAX_CHART_BARS else (rows.c[group.name],)
    bars = db.session.execute(
        select(rows.c[group.name], expression)
        .select_from(rows)
        .group_by(rows.c[group.name])
        .order_by(*ordering)
        .limit(MAX_CHART_BARS)
    ).all()
    chart = [(code_text(group_column, code, page), _figure_value(first, value) or 0) for code, value in bars]
    title = f"{first['label']} by {group.label}"
    if group_count > MAX_CHART_BARS:
        title += f" (the {MAX_CHART_BARS} largest of {group_count:,})"
    return Summary(overall[0], values, chart, title)


# --------------------------------------------------------------------------- PDF


def coded_groups(
    rows: Iterable[tuple],
    request: dict,
    layout: dict,
    dataset: Dataset,
    page: PdfLayout,
    counts: dict[Any, int],
) -> Iterator[Group]:
    code = dataset.column(layout["code_column"])
    assert code is not None
    code_column = PdfColumn(code.name, code.label, code.type)
    code_index = [c.name for c in request_columns(request)].index(code.name)
    project = projector(request, [spec["name"] for spec in layout["columns"]])
    descriptions = layout.get("code_descriptions") or {}
    for value, group_rows in itertools.groupby(rows, key=lambda row: row[code_index]):
        text = code_text(code_column, value, page)
        yield Group(
            code=text,
            description=code_description(descriptions, value, text),
            rows=map(project, group_rows),
            row_count=counts.get(value),
        )


def _write_pdf(
    export: QueryExport, access: RequesterContext, out: BinaryIO, progress: Progress, page: PdfLayout
) -> int:
    request, layout = export.request, export.print_params["layout"]
    dataset = request_dataset(request)
    if layout["kind"] == "summary":
        progress(0, None)
        summary = summarise(request, access, layout, dataset, page)
        render_summary_pdf(page, summary.figures, summary.chart, out, chart_title=summary.chart_title)
        progress(summary.rows, summary.rows)
        return summary.rows

    settings = current_app.config["SETTINGS"]
    max_rows, workers = settings.report_pdf_max_rows, settings.report_pdf_workers
    total = count_rows(request, access)
    if total > max_rows:
        raise _too_many_for_pdf(total, max_rows)
    progress(0, total)
    counts = group_counts(request, access, layout["code_column"]) if layout["kind"] == "coded" else {}
    columns = printed_columns(dataset, layout)
    rows = iter_rows(request, access)
    try:
        if layout["kind"] == "coded":
            groups = coded_groups(rows, request, layout, dataset, page, counts)
            return render_grouped_pdf(
                columns, groups, page, out, progress=lambda n: progress(n, total), max_rows=max_rows, workers=workers
            )
        project = projector(request, [c.name for c in columns])
        return render_table_pdf(
            columns,
            map(project, rows),
            page,
            out,
            progress=lambda n: progress(n, total),
            max_rows=max_rows,
            workers=workers,
        )
    except PdfTooLarge:
        # The rows grew past the limit between the count and the read.
        raise _too_many_for_pdf(max_rows + 1, max_rows) from None
    finally:
        rows.close()


def _too_many_for_pdf(rows: int, max_rows: int) -> TooManyRows:
    return TooManyRows(
        f"This report has {rows:,} rows; a PDF holds at most {max_rows:,}. "
        "Request it as Excel (XLSX), or narrow the query's filters."
    )


def rows_label(count: int) -> str:
    return f"{count:,} row" + ("" if count == 1 else "s")


def add_to(totals: dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        totals[name] = totals.get(name, 0) + value


# --------------------------------------------------------------------------- entry point


def write_report_file(export: QueryExport, access: RequesterContext, out: BinaryIO, progress: Progress) -> int:
    """Write the report file's bytes to `out`; returns the number of data rows it presents."""
    request = export.request
    dataset = request_dataset(request)
    page = pdf_layout(export.print_params, request, dataset, _date_format(export.workspace_id), utcnow())
    if export.format == "pdf":
        return _write_pdf(export, access, out, progress, page)
    # Imported here: openpyxl costs every process that loads this module 22 MB.
    from app.rendering.report_xlsx import write_report_xlsx

    return write_report_xlsx(export, access, out, progress, page)


# --------------------------------------------------------------------------- browser preview


@dataclass(frozen=True)
class PreviewGroup:
    heading: str
    rows: list[list[str]]
    subtotal_label: str
    # One text per column (empty where nothing is totalled); None while the group goes on past the rows shown.
    subtotal: list[str] | None


@dataclass(frozen=True)
class ReportPreview:
    """The first page's content as text, formatted as the PDF prints it."""

    kind: str
    page: PdfLayout
    generated_text: str | None
    columns: list[PdfColumn]
    rows: list[list[str]]
    groups: list[PreviewGroup]
    figures: list[tuple[str, str]]
    chart: list[tuple[str, str, float]]
    chart_title: str | None
    total_rows: int

    @property
    def label_span(self) -> int:
        """How many leading columns a subtotal's label spans: those before the first number."""
        return next((i for i, column in enumerate(self.columns) if column.numeric), len(self.columns))


def _figure_text(value: Any, page: PdfLayout) -> str:
    return format_value(PdfColumn("figure", "figure", "decimal"), value, page) if value is not None else "—"


def report_preview(
    request: dict, print_params: dict, access: RequesterContext, workspace_id: int, limit: int
) -> ReportPreview:
    """What the report's first page shows: title block, headers and the first `limit` rows
    (grouped, with the subtotals of the groups shown whole), or the summary's figures."""
    dataset = request_dataset(request)
    layout = print_params["layout"]
    page = pdf_layout(print_params, request, dataset, _date_format(workspace_id), utcnow())
    generated = format_value(PdfColumn("g", "g", "datetime"), page.generated_at, page) if page.generated_at else None
    if layout["kind"] == "summary":
        summary = summarise(request, access, layout, dataset, page)
        numbers = [abs(float(value or 0)) for _, value in summary.chart]
        scale = max(numbers, default=0.0) or 1.0
        return ReportPreview(
            kind="summary",
            page=page,
            generated_text=generated,
            columns=[],
            rows=[],
            groups=[],
            figures=[(label, _figure_text(value, page)) for label, value in summary.figures],
            chart=[
                (label, _figure_text(value, page), round(100 * number / scale, 1))
                for (label, value), number in zip(summary.chart, numbers, strict=True)
            ],
            chart_title=summary.chart_title,
            total_rows=summary.rows,
        )

    columns = printed_columns(dataset, layout)
    total = count_rows(request, access)
    first_rows = {**request, "row_limit": min(request.get("row_limit") or limit, limit)}
    rows = db.session.execute(build_select(first_rows, access)).tuples().all()
    project = projector(request, [c.name for c in columns])

    def texts(values: Sequence[Any]) -> list[str]:
        return [format_value(c, v, page) for c, v in zip(columns, values, strict=True)]

    if layout["kind"] == "table":
        return ReportPreview("table", page, generated, columns, [texts(project(r)) for r in rows], [], [], [], None,
                             total)

    counts = group_counts(request, access, layout["code_column"])
    amounts = {c.name for c in columns if c.numeric}
    groups = []
    for group in coded_groups(rows, request, layout, dataset, page, counts):
        shown = list(group.rows)
        heading = f"{group.code} — {group.description}" if group.description else group.code
        subtotal = None
        if len(shown) == group.row_count:
            sums: dict[str, Any] = {}
            for values in shown:
                for column, value in zip(columns, values, strict=True):
                    if column.name in amounts:
                        add_to(sums, column.name, value)
            subtotal = [format_value(c, sums[c.name], page) if c.name in sums else "" for c in columns]
        groups.append(
            PreviewGroup(
                heading=f"{heading} · {rows_label(group.row_count or 0)}",
                rows=[texts(v) for v in shown],
                subtotal_label=f"Subtotal {group.code} · {rows_label(len(shown))}",
                subtotal=subtotal,
            )
        )
    return ReportPreview("coded", page, generated, columns, [], groups, [], [], None, total)
