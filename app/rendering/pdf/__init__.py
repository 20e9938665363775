"""Report PDFs: tables, coded (grouped) tables and summaries, laid out with reportlab.

- ``model``: columns, page layout, groups;
- ``formatting``: the text of a value (numbers, dates, booleans) and exact sums;
- ``fonts``: the committed fonts and which one draws each character;
- ``lines``: cell text wrapped, clipped, shaped and drawn in every script;
- ``styles``: type sizes, cell padding, colours and a document's text styles;
- ``document``: the pages every report is laid out on (title block, repeated header, page numbers);
- ``table_rows``: a table's rows laid out (cells, group headings, subtotals, totals);
- ``table_blocks``: the rows painted, in blocks that split at page ends, with progress;
- ``table_report``: a table or coded report's PDF;
- ``summary``: a summary report's figures and chart.

Nothing here needs a Flask application context or the database: rows and columns in, bytes out.

The package itself gives only what needs no reportlab (the model and the values' text), which
report previews, XLSX reports and workspace dates use too; the renderers are imported from
``table_report`` and ``summary`` by the one service that writes a PDF, so only a job making a PDF
loads reportlab and the shaping libraries (tests/unit/architecture/test_job_imports.py).
"""

from app.rendering.pdf.formatting import (
    add_exact,
    add_to,
    exact_number,
    figure_text,
    format_boolean,
    format_date,
    format_datetime,
    format_number,
    format_value,
    rows_label,
)
from app.rendering.pdf.model import MARGIN_SIDE, Group, PdfColumn, PdfLayout, PdfTooLarge

__all__ = [
    "MARGIN_SIDE",
    "Group",
    "PdfColumn",
    "PdfLayout",
    "PdfTooLarge",
    "add_exact",
    "add_to",
    "exact_number",
    "figure_text",
    "format_boolean",
    "format_date",
    "format_datetime",
    "format_number",
    "format_value",
    "rows_label",
]
