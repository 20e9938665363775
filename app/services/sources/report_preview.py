"""A report's preview in the browser: its first page's content as text, formatted as the PDF prints it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.data.query_runner import count_rows, request_dataset
from app.data.report_aggregates import first_rows, group_counts
from app.domain.people.access import RequesterContext
from app.domain.sources.print_params import PrintParams
from app.domain.sources.stored_request import FileRequest
from app.models.report import ReportKind
from app.rendering.pdf import PdfColumn, PdfLayout, add_to, format_value, rows_label
from app.services.files.report_file_production import coded_groups, printed_columns, projector, report_page, summarise


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
    request: FileRequest, print_params: PrintParams, access: RequesterContext, workspace_id: int, limit: int
) -> ReportPreview:
    """What the report's first page shows: title block, headers and the first `limit` rows
    (grouped, with the subtotals of the groups shown whole), or the summary's figures."""
    dataset = request_dataset(request)
    layout = print_params.layout
    page = report_page(print_params, request, workspace_id)
    generated = format_value(PdfColumn("g", "g", "datetime"), page.generated_at, page) if page.generated_at else None
    if layout.kind == ReportKind.SUMMARY:
        summary = summarise(request, access, layout, dataset, page)
        numbers = [abs(float(value or 0)) for _, value in summary.chart]
        scale = max(numbers, default=0.0) or 1.0
        return ReportPreview(
            kind=ReportKind.SUMMARY,
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
    rows = first_rows(request, access, limit)
    project = projector(request, [c.name for c in columns])

    def texts(values: Sequence[Any]) -> list[str]:
        return [format_value(c, v, page) for c, v in zip(columns, values, strict=True)]

    if layout.kind == ReportKind.TABLE:
        return ReportPreview(
            ReportKind.TABLE, page, generated, columns, [texts(project(r)) for r in rows], [], [], [], None, total
        )

    counts = group_counts(request, access, layout.grouped_by)
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
    return ReportPreview(ReportKind.CODED, page, generated, columns, [], groups, [], [], None, total)
