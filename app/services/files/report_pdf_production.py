"""A report file as PDF (table, coded, summary): the rows read with the requester's access and
laid out by app/rendering/pdf. Chosen by report_file_production for a file whose format is PDF,
the only module of the services that loads reportlab and the shaping libraries."""

from __future__ import annotations

from flask import current_app

from app.data.query_runner import count_rows, iter_rows, request_dataset
from app.data.report_aggregates import group_counts
from app.models.report import ReportKind
from app.rendering import TooManyRows
from app.rendering.pdf import PdfTooLarge
from app.rendering.pdf.summary import render_summary_pdf
from app.rendering.pdf.table_report import render_grouped_pdf, render_table_pdf
from app.services.files.report_file_production import (
    ReportPrinting,
    coded_groups,
    printed_columns,
    projector,
    summarise,
)

# Rows read from the database at a time: the layout takes a block of 200 at a time, and a batch of
# 5,000 typed rows (the query runner's default) held 3 MB more than this for no time saved.
ROWS_FETCHED = 1_000


def _too_many_for_pdf(rows: int, max_rows: int) -> TooManyRows:
    return TooManyRows(
        f"This report has {rows:,} rows; a PDF holds at most {max_rows:,}. "
        "Request it as Excel (XLSX), or narrow the query's filters."
    )


def write_report_pdf(printing: ReportPrinting) -> int:
    request, access, layout, page = printing.request, printing.access, printing.layout, printing.page
    out, progress, warnings = printing.out, printing.progress, printing.warnings
    dataset = request_dataset(request)
    if layout.kind == ReportKind.SUMMARY:
        progress(0, None)
        summary = summarise(request, access, layout, dataset, page)
        # What a summary prints of its rows is its figures and its chart's bars.
        printing.digest.add_figures([*summary.figures, *summary.chart])
        render_summary_pdf(
            page, summary.figures, summary.chart, out, chart_title=summary.chart_title, warnings=warnings
        )
        progress(summary.rows, summary.rows)
        return summary.rows

    max_rows = current_app.config["SETTINGS"].report_pdf_max_rows
    total = count_rows(request, access)
    if total > max_rows:
        raise _too_many_for_pdf(total, max_rows)
    progress(0, total)
    counts = group_counts(request, access, layout.grouped_by) if layout.kind == ReportKind.CODED else {}
    columns = printed_columns(dataset, layout)
    read = iter_rows(request, access, batch_size=ROWS_FETCHED)
    rows = printing.digest.typed_rows(read)
    try:
        if layout.kind == ReportKind.CODED:
            groups = coded_groups(rows, request, layout, dataset, page, counts)
            return render_grouped_pdf(
                columns, groups, page, out, progress=progress, total=total, max_rows=max_rows, warnings=warnings
            )
        project = projector(request, [c.name for c in columns])
        return render_table_pdf(
            columns, map(project, rows), page, out, progress=progress, total=total, max_rows=max_rows, warnings=warnings
        )
    except PdfTooLarge:
        # The rows grew past the limit between the count and the read.
        raise _too_many_for_pdf(max_rows + 1, max_rows) from None
    finally:
        read.close()
