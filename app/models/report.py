"""Reports: a saved query presented as a table, a coded (grouped) listing or summary figures.

The layout (columns and widths, code column and descriptions, summary figures) is plain data
validated by app/domain/sources/report_spec.py; the print parameters say how the page is set out.
A saved query used by a report cannot be deleted (the foreign key restricts it and
app/services/sources/reports.py explains it first); removing a report leaves its files, whose
reference the database clears (query_exports.report_id ON DELETE SET NULL).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Index, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.export_file import FileFormat
from app.models.types import UTCDateTime, utcnow


class ReportKind(StrEnum):
    """How a report presents its query's rows; a summary is figures and a chart, so PDF only."""

    TABLE = "table"
    CODED = "coded"
    SUMMARY = "summary"


PAGE_SIZES = ("A4", "Letter")
ORIENTATIONS = ("portrait", "landscape")
#: How the page is set out: the report's fields a report file keeps a copy of.
PRINT_PARAMETERS = ("title", "subtitle", "page_size", "orientation", "show_filters", "show_generated_at")


class Report(Model):
    __tablename__ = "reports"
    __table_args__ = (
        UniqueConstraint("workspace_id", "name"),
        CheckConstraint("kind IN ('table', 'coded', 'summary')", name="kind"),
        CheckConstraint("page_size IN ('A4', 'Letter')", name="page_size"),
        CheckConstraint("orientation IN ('portrait', 'landscape')", name="orientation"),
        CheckConstraint("kind <> 'coded' OR code_column IS NOT NULL", name="coded_has_code_column"),
        # The orders of the Reports list (keyset pagination, app/services/pages/list_pages.py).
        Index("ix_reports_list_name", "workspace_id", text("lower(name)"), "id"),
        Index("ix_reports_list_updated", "workspace_id", "updated_at", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("people.id"))
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(10))
    source_query_id: Mapped[int] = mapped_column(ForeignKey("saved_queries.id", ondelete="RESTRICT"), index=True)
    # [{"name": column, "width": percent of the page width or null for an equal share}, …]
    columns: Mapped[list[dict]] = mapped_column(JSON, default=list)
    code_column: Mapped[str | None] = mapped_column(String(100))
    # {code as text: description printed in the group heading}
    code_descriptions: Mapped[dict] = mapped_column(JSON, default=dict)
    # {"group_column": column or null, "figures": [{"function", "column", "label"}, …]}
    summary: Mapped[dict] = mapped_column(JSON, default=dict)
    title: Mapped[str] = mapped_column(String(200))
    subtitle: Mapped[str] = mapped_column(String(300), default="")
    page_size: Mapped[str] = mapped_column(String(10), default="A4")
    orientation: Mapped[str] = mapped_column(String(10), default="portrait")
    show_filters: Mapped[bool] = mapped_column(default=True)
    show_generated_at: Mapped[bool] = mapped_column(default=True)
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    def print_params(self) -> dict:
        """How the page is set out; a report file keeps a copy of these."""
        return {name: getattr(self, name) for name in PRINT_PARAMETERS}

    def layout(self) -> dict:
        """What the report presents of its query's rows; a report file keeps a copy of this too."""
        return {
            "kind": self.kind,
            "columns": [dict(c) for c in self.columns],
            "code_column": self.code_column,
            "code_descriptions": dict(self.code_descriptions or {}),
            "summary": dict(self.summary or {}),
        }

    @property
    def formats(self) -> tuple[str, ...]:
        """File formats a report of this kind can be requested in (INV-03)."""
        return (FileFormat.PDF,) if self.kind == ReportKind.SUMMARY else (FileFormat.PDF, FileFormat.XLSX)
