"""Saved queries: a dataset, columns, filters, sort and parameters, built in the console."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime, utcnow


class SavedQuery(Model):
    __tablename__ = "saved_queries"
    __table_args__ = (
        UniqueConstraint("workspace_id", "name"),
        # The orders of the Queries list (keyset pagination, app/services/pages/list_pages.py).
        Index("ix_saved_queries_list_name", "workspace_id", text("lower(name)"), "id"),
        Index("ix_saved_queries_list_updated", "workspace_id", "updated_at", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("people.id"))
    name: Mapped[str] = mapped_column(String(200))
    dataset: Mapped[str] = mapped_column(String(100))
    # The query definition; its shape is validated by app.domain.sources.query_spec.
    columns: Mapped[list[str]] = mapped_column(JSON)
    filters: Mapped[list[dict]] = mapped_column(JSON, default=list)
    sort: Mapped[list[dict]] = mapped_column(JSON, default=list)
    parameters: Mapped[list[dict]] = mapped_column(JSON, default=list)
    row_limit: Mapped[int | None]
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    def definition(self) -> dict:
        """The definition as a plain dict, the shape query_spec validates and substitutes."""
        return {
            "dataset": self.dataset,
            "columns": list(self.columns),
            "filters": list(self.filters),
            "sort": list(self.sort),
            "parameters": list(self.parameters),
            "row_limit": self.row_limit,
        }
