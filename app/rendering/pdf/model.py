"""What a PDF report is made of: its columns, its page, the groups of a coded report."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

COLUMN_TYPES = frozenset({"text", "integer", "decimal", "date", "datetime", "boolean"})
NUMERIC_TYPES = frozenset({"integer", "decimal"})
#: Portrait width and height in points (ISO 216 A4: 210 × 297 mm; US Letter: 8.5 × 11 in).
PAGE_SIZES = {"a4": (210 * 72 / 25.4, 297 * 72 / 25.4), "letter": (612.0, 792.0)}
ORIENTATIONS = frozenset({"portrait", "landscape"})

# Page margins in points; the bottom one leaves room for the "Page N of M" footer.
MARGIN_TOP = 34.0
MARGIN_SIDE = 34.0
MARGIN_BOTTOM = 46.0


class PdfTooLarge(Exception):
    """More rows arrived than a PDF is allowed to hold.

    Outside DomainError: a signal from the layout to report file production, which answers the
    person with TooManyRows."""

    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        super().__init__(
            f"This report has more than {max_rows:,} rows, which is more than a PDF export "
            f"allows. Export it as XLSX instead, which has no such limit."
        )


@dataclass(frozen=True)
class PdfColumn:
    name: str
    label: str
    type: str = "text"  # 'text', 'integer', 'decimal', 'date', 'datetime', 'boolean'
    width: float | None = None  # relative width weight; None = an equal share
    align: str | None = None  # 'left', 'right', 'center'; default right for integer/decimal

    def __post_init__(self) -> None:
        if self.type not in COLUMN_TYPES:
            raise ValueError(f"unknown column type {self.type!r} for column {self.name!r}")
        if self.align not in (None, "left", "right", "center"):
            raise ValueError(f"unknown alignment {self.align!r} for column {self.name!r}")
        if self.width is not None and not (self.width > 0 and math.isfinite(self.width)):
            raise ValueError(f"column {self.name!r} needs a positive width, not {self.width!r}")

    @property
    def numeric(self) -> bool:
        return self.type in NUMERIC_TYPES

    @property
    def effective_align(self) -> str:
        if self.align:
            return self.align
        return "right" if self.numeric else "left"


@dataclass(frozen=True)
class PdfLayout:
    title: str
    subtitle: str = ""
    page_size: str = "A4"  # or "Letter"
    orientation: str = "portrait"  # or "landscape"
    filters_text: str | None = None  # printed under the title when given
    generated_at: datetime | None = None  # printed when given
    date_format: str = "%d/%m/%Y"  # the workspace's format for date and datetime cells
    time_format: str = "%H:%M"  # appended to date_format for datetime cells; names the zone when it is shown
    time_zone: str = "UTC"  # IANA zone whose clocks datetime cells and the generated time are shown on
    thousands_separator: str = ","
    decimal_separator: str = "."

    def __post_init__(self) -> None:
        if self.page_size.lower() not in PAGE_SIZES:
            raise ValueError(f"unknown page size {self.page_size!r}; use A4 or Letter")
        if self.orientation.lower() not in ORIENTATIONS:
            raise ValueError(f"unknown orientation {self.orientation!r}")

    @property
    def datetime_format(self) -> str:
        return f"{self.date_format} {self.time_format}"

    @property
    def page_size_points(self) -> tuple[float, float]:
        width, height = PAGE_SIZES[self.page_size.lower()]
        return (height, width) if self.orientation.lower() == "landscape" else (width, height)


@dataclass(frozen=True)
class Group:
    """One group of a grouped ("coded") report.

    ``rows`` may be any iterable and is consumed once. ``row_count`` is printed in the group
    heading; when it is None and ``rows`` has a length, that length is used, and otherwise
    the heading has no count (the subtotal row always has it). ``subtotals`` maps column
    names to the values to print on the subtotal row; when None, the numeric columns are
    summed while the rows stream by.
    """

    code: str
    description: str
    rows: Iterable[Sequence[Any]]
    subtotals: Mapping[str, Any] | None = None
    row_count: int | None = None
