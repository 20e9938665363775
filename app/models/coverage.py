"""The coverage registry (INV-13): each dataset version recorded once, and the registry's versions.

Rows are written only by app/services/workspace_export/coverage.py from the declarations in
app/domain/workspace_export/coverage.py. A (dataset, schema version) row keeps the content hash it was first
recorded with; a registry version is added whenever a reconcile changed anything.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime, utcnow


class CoverageDataset(Model):
    __tablename__ = "export_coverage_datasets"
    __table_args__ = (
        UniqueConstraint("dataset", "schema_version", name="export_coverage_datasets_version_uidx"),
        CheckConstraint("status IN ('active', 'deferred', 'retired')", name="status"),
        CheckConstraint("schema_version >= 1", name="schema_version"),
        CheckConstraint("length(content_hash) = 64", name="content_hash"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset: Mapped[str] = mapped_column(String(100))
    schema_version: Mapped[int]
    status: Mapped[str] = mapped_column(String(20))
    content_hash: Mapped[str] = mapped_column(String(64))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class CoverageVersion(Model):
    __tablename__ = "export_coverage_versions"

    version: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    summary: Mapped[str] = mapped_column(Text)
