"""Producing a query export file's bytes: the stored request run with the requester's access.

The rows are read through app/data (PostgreSQL's COPY for CSV, already formatted; typed rows
from a server-side cursor otherwise) and handed to a writer in app/rendering, which turns them
into bytes. Called by app/services/files/export_runner.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from contextlib import closing

from app.data.csv_copy import copy_record_batches
from app.data.query_runner import count_rows, iter_rows, request_columns, request_dataset
from app.domain.errors import ValidationError
from app.domain.people.access import RequesterContext
from app.domain.sources.catalog import Column
from app.domain.sources.stored_request import FileRequest
from app.extensions import db
from app.models import ExportFile
from app.models.export_file import FileFormat
from app.rendering.csv_writer import ROWS_PER_CHUNK, write_csv, write_csv_records
from app.rendering.row_digest import RowDigest, WrittenRows
from app.rendering.xlsx_writer import write_xlsx

Progress = Callable[[int, int | None], None]


def write_query_file(
    export: ExportFile, access: RequesterContext, out, progress: Progress, warnings: Counter[str]
) -> WrittenRows:
    """Write the file to `out` (anything with `write(bytes)`); returns the number of data rows and
    their digest (app/rendering/row_digest.py), taken as they stream to the writer.

    The rows are counted first so progress can be shown as a percentage; `progress(rows, total)`
    is called as the rows go (every few thousand) and once at the end. Limits of the format that
    change data are counted in `warnings`. Raises AccessDenied when the access no longer covers
    the dataset, ValidationError for a stored request not in its shape or that no longer fits the
    catalog, and TooManyRows for an XLSX file past Excel's sheet size. Nothing is written before
    those checks.
    """
    request = FileRequest.from_json(export.request)
    total = count_rows(request, access)
    progress(0, total)
    columns = request_columns(request)
    digest = RowDigest(columns)
    written = _write(export, request, columns, access, out, progress, warnings, total, digest)
    return WrittenRows(written, digest.hexdigest())


def _write(
    export: ExportFile,
    request: FileRequest,
    columns: list[Column],
    access: RequesterContext,
    out,
    progress: Progress,
    warnings: Counter[str],
    total: int,
    digest: RowDigest,
) -> int:
    if export.format == FileFormat.CSV:
        if db.engine.dialect.name == "postgresql":
            batches = copy_record_batches(
                request, access, exact_values=export.exact_values, rows_per_batch=ROWS_PER_CHUNK
            )
            with closing(batches):
                return write_csv_records(
                    columns,
                    digest.record_batches(batches),
                    out,
                    heading=export.heading,
                    progress=progress,
                    total=total,
                    warnings=warnings,
                )
        with closing(iter_rows(request, access)) as rows:
            return write_csv(
                columns,
                digest.typed_rows(rows),
                out,
                heading=export.heading,
                exact_values=export.exact_values,
                progress=progress,
                total=total,
                warnings=warnings,
            )
    if export.format == FileFormat.XLSX:
        with closing(iter_rows(request, access)) as rows:
            return write_xlsx(
                columns,
                digest.typed_rows(rows),
                out,
                heading=export.heading,
                include_descriptions=export.include_descriptions,
                progress=progress,
                total=total,
                sheet_name=request_dataset(request).label,
                time_zone=export.time_zone,
                warnings=warnings,
            )
    raise ValidationError(f"A query file is CSV or XLSX, not “{export.format}”.", "format")
