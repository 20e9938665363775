"""CSV export files: UTF-8 with a byte-order mark, RFC 4180 records ended by `\\r\\n`.

The byte-order mark is there for Excel, which opens a CSV file by double-click in the
machine's legacy code page unless the file starts with one; every other reader skips it.

The rule for CSV, one for the whole file:

- every text field is quoted (`"`, with `"` doubled inside), so a reader that splits on another
  separator than `,` cannot cut a quoted text at a `,`; numbers, dates, times and booleans are
  not quoted, so a spreadsheet reads them as what they are (`-42` stays a number);
- a missing value (NULL) is an empty field; an empty text is `""`; a row of one column never
  ends up as an empty line (its empty field is written `""`);
- spreadsheet-safe files (the default) guard text against formula injection by the rule of
  app/domain/files/formula_guard.py (a `'` before a trigger at the start or after a `;`, tab or line
  break, blanks skipped); files "for data tools" (`exact_values`) write every text exactly;
- dates are YYYY-MM-DD and times YYYY-MM-DDTHH:MM:SSZ in UTC (app/rendering/cells.py);
- nothing is cut or escaped: CSV holds any text, control characters included. The writers take
  the `warnings` Counter every writer takes, and never add to it: no CSV file carries warnings.

Two inputs give byte-identical files for the same rows (a test holds them to it):

- `write_csv` takes typed rows and formats them here (any database);
- `write_csv_records` relays records PostgreSQL's COPY already formatted by the same rule
  (app/data/csv_copy.py): COPY ends each record with `\\n`, which becomes `\\r\\n`.

Writers take rows and write bytes; they never query.
"""

from __future__ import annotations

import codecs
import csv
import io
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from app.domain.sources.catalog import Column
from app.rendering.cells import FORMATTERS, CellFormatter
from app.rendering.neutralise import neutralise
from app.vocabulary import Heading

Progress = Callable[[int, int | None], None]

BOM = codecs.BOM_UTF8
# A record as COPY writes it, less its last byte (the `\n` that ends it).
_WITHOUT_TERMINATOR = operator.itemgetter(slice(None, -1))
ROWS_PER_CHUNK = 2000


def heading_rows(columns: Sequence[Column], heading: str) -> list[list[str]]:
    """The heading row for `heading`: the columns' names, their labels, or none."""
    if heading == Heading.NAMES:
        return [[column.name for column in columns]]
    if heading == Heading.LABELS:
        return [[column.label for column in columns]]
    if heading == Heading.NONE:
        return []
    raise ValueError(f"unknown heading behaviour {heading!r}")


def _write_heading(out, columns: Sequence[Column], heading: str) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(heading_rows(columns, heading))
    out.write(BOM + buffer.getvalue().encode("utf-8"))


def _quoted_text(guard: Callable[[str], str]) -> Callable[[str | None], str]:
    def field(value: str | None) -> str:
        if value is None:
            return ""
        return '"' + guard(value).replace('"', '""') + '"'

    return field


def _exact(text: str) -> str:
    return text


def field_writers(columns: Sequence[Column], exact_values: bool) -> list[CellFormatter]:
    """One function per column giving a value's CSV field, quoting included."""
    text_field = _quoted_text(_exact if exact_values else neutralise)
    return [text_field if column.type == "text" else FORMATTERS[column.type] for column in columns]


def write_csv(
    columns: Sequence[Column],
    rows: Iterable[Sequence],
    out,
    *,
    heading: str,
    exact_values: bool,
    progress: Progress,
    total: int | None,
    warnings: Counter[str],
) -> int:
    """Write typed rows (values in `columns` order) as a CSV file to `out`; returns the number of rows."""
    writers = field_writers(columns, exact_values)
    single_column = len(columns) == 1
    _write_heading(out, columns, heading)
    pending: list[str] = []
    written = 0
    for row in rows:
        record = ",".join([write(value) for write, value in zip(writers, row, strict=True)])
        pending.append(record if record or not single_column else '""')
        written += 1
        if written % ROWS_PER_CHUNK == 0:
            out.write(("\r\n".join(pending) + "\r\n").encode("utf-8"))
            pending.clear()
            progress(written, total)
    if pending:
        out.write(("\r\n".join(pending) + "\r\n").encode("utf-8"))
    progress(written, total)
    return written


def crlf_records(records: Sequence[bytes | memoryview]) -> bytes:
    """Records as PostgreSQL's COPY writes them, one row each whose last byte is the `\\n` that
    ends it (a line break inside a quoted value is the value's own), joined with `\\r\\n` after
    each, by C calls alone: no Python step per record."""
    return b"\r\n".join(map(_WITHOUT_TERMINATOR, records)) + b"\r\n"


def write_csv_records(
    columns: Sequence[Column],
    batches: Iterable[Sequence[bytes | memoryview]],
    out,
    *,
    heading: str,
    progress: Progress,
    total: int | None,
    warnings: Counter[str],
) -> int:
    """Relay batches of records already formatted by this module's rule, each ending with `\\n`,
    as CSV to `out`, a batch at a time.

    Each record is one row whose last byte is its terminator (a newline inside a quoted value
    never is): swapping that byte gives RFC 4180 records without looking inside the rows
    (`crlf_records`).
    """
    _write_heading(out, columns, heading)
    written = 0
    for batch in batches:
        out.write(crlf_records(batch))
        written += len(batch)
        # The total was counted a moment earlier on another connection; rows may have come since.
        progress(written if total is None else min(written, total), total)
    progress(written, total)
    return written
