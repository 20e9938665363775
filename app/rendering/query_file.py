"""A query export file's bytes: the stored request run with the requester's access, written as CSV or XLSX."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing

from app.data.query_runner import count_rows, iter_rows, request_columns, request_dataset
from app.domain.access import RequesterContext
from app.domain.errors import ValidationError
from app.models import QueryExport
from app.rendering.csv_writer import write_csv
from app.rendering.xlsx_writer import write_xlsx


def write_query_file(
    export: QueryExport, access: RequesterContext, out, progress: Callable[[int, int | None], None]
) -> int:
    """Write the file to `out` (anything with `write(bytes)`); returns the number of data rows.

    The rows are counted first so progress can be shown as a percentage; `progress(rows, total)`
    is called as the rows go (every few thousand) and once at the end. Raises AccessDenied when
    the access no longer covers the dataset, ValidationError for a request that no longer fits
    the catalog, and TooManyRows for an XLSX file past Excel's sheet size.
    """
    request = export.request or {}
    total = count_rows(request, access)
    progress(0, total)
    if export.format == "csv":
        return write_csv(request, access, export.heading, out, progress, total)
    if export.format == "xlsx":
        columns = request_columns(request)
        with closing(iter_rows(request, access)) as rows:
            return write_xlsx(
                columns,
                rows,
                out,
                heading=export.heading,
                include_descriptions=export.include_descriptions,
                progress=progress,
                total=total,
                sheet_name=request_dataset(request).label,
            )
    raise ValidationError(f"A query file is CSV or XLSX, not “{export.format}”.", "format")
