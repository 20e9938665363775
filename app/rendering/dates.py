"""Dates and times as a workspace shows them on screen and in PDFs: its date format, and its
time zone's clocks with the zone named."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.rendering.pdf.formatting import format_date, format_datetime


@dataclass(frozen=True)
class WorkspaceDates:
    date_format: str = "%d/%m/%Y"  # strftime pattern (Workspace.date_format)
    time_zone: str = "UTC"  # IANA name (Workspace.time_zone)

    @property
    def datetime_format(self) -> str:
        return f"{self.date_format} %H:%M {self.time_zone}"

    def date_text(self, value: Any) -> str:
        return format_date(value, self.date_format)

    def datetime_text(self, value: Any) -> str:
        return format_datetime(value, self.datetime_format, self.date_format, self.time_zone)
