"""A report file as Excel (table, coded): the rows read with the requester's access and written
by app/rendering/report_xlsx (openpyxl, which costs a process about 22 MB). Chosen by
report_file_production for a file whose format is XLSX."""

from __future__ import annotations

from typing import Any

from app.data.query_runner import count_rows, iter_rows, request_dataset
from app.data.report_aggregates import group_counts
from app.models.report import ReportKind
from app.rendering.report_xlsx import write_report_xlsx
from app.services.files.report_file_production import ReportPrinting, coded_groups, projector


def write_report_xlsx_file(printing: ReportPrinting) -> int:
    request, access, layout, page = printing.request, printing.access, printing.layout, printing.page
    out, progress, warnings = printing.out, printing.progress, printing.warnings
    dataset = request_dataset(request)
    names = layout.column_names
    total = count_rows(request, access)
    progress(0, total)
    counts = group_counts(request, access, layout.grouped_by) if layout.kind == ReportKind.CODED else {}
    read = iter_rows(request, access)
    rows = printing.digest.typed_rows(read)
    try:
        if layout.kind == ReportKind.CODED:
            body: dict[str, Any] = {"groups": coded_groups(rows, request, layout, dataset, page, counts)}
        else:
            body = {"rows": map(projector(request, names), rows)}
        return write_report_xlsx(
            [dataset.known_column(name) for name in names],
            page,
            out,
            **body,
            total=total,
            progress=progress,
            warnings=warnings,
            time_zone=printing.time_zone,
        )
    finally:
        read.close()
