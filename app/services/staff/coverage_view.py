"""The coverage registry as staff read it: each declared dataset beside what the registry holds
for it, the registry's current version, and its latest change (the last reconcile that changed
anything; one that found nothing to change adds no version)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from app.domain.workspace_export.coverage import DECLARATIONS, EXCLUDED_TABLES
from app.extensions import db
from app.models.coverage import CoverageDataset, CoverageVersion


@dataclass(frozen=True)
class DatasetLine:
    dataset: str
    status: str
    schema_version: int
    content_hash: str
    recorded_status: str | None
    recorded_at: datetime | None
    state: str  # "in step", "not recorded yet", "status differs", "content changed without a new version"


@dataclass(frozen=True)
class Registry:
    lines: list[DatasetLine]
    version: int | None
    version_at: datetime | None
    version_summary: str | None
    excluded: dict[str, str]


def registry() -> Registry:
    recorded = {(row.dataset, row.schema_version): row for row in db.session.scalars(select(CoverageDataset))}
    lines = []
    for declaration in DECLARATIONS:
        row = recorded.get((declaration.dataset, declaration.schema_version))
        if row is None:
            state = "not recorded yet"
        elif row.content_hash != declaration.content_hash:
            state = "content changed without a new version"
        elif row.status != declaration.status:
            state = "status differs"
        else:
            state = "in step"
        lines.append(
            DatasetLine(
                declaration.dataset,
                declaration.status,
                declaration.schema_version,
                declaration.content_hash,
                row.status if row else None,
                row.recorded_at if row else None,
                state,
            )
        )
    latest = db.session.scalars(select(CoverageVersion).order_by(CoverageVersion.version.desc()).limit(1)).first()
    db.session.rollback()
    return Registry(
        lines,
        latest.version if latest else None,
        latest.created_at if latest else None,
        latest.summary if latest else None,
        dict(sorted(EXCLUDED_TABLES.items())),
    )
