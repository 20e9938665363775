"""Reconcile the coverage registry with the declarations in code (INV-13), in one transaction.

A (dataset, schema version) not yet recorded is inserted; a declared status that differs
from the recorded one is updated; a recorded version whose content hash differs from the
declaration is refused, and then nothing at all is written. A new registry version is
added only when something changed, with a summary of what.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select, text

from app.domain.coverage import DECLARATIONS, CoverageDeclaration
from app.extensions import db
from app.models.coverage import CoverageDataset, CoverageVersion


class CoverageConflict(Exception):
    """A declaration changed its columns without a new schema version."""


@dataclass
class ReconcileOutcome:
    inserted: list[str] = field(default_factory=list)
    status_changes: list[str] = field(default_factory=list)
    registry_version: int | None = None  # the version now current; None when the registry is empty
    advanced: bool = False

    @property
    def changes(self) -> list[str]:
        return self.inserted + self.status_changes


def reconcile_coverage(declarations: Sequence[CoverageDeclaration] = DECLARATIONS) -> ReconcileOutcome:
    try:
        outcome = _reconcile(declarations)
    except BaseException:
        db.session.rollback()
        raise
    db.session.commit()
    return outcome


def _reconcile(declarations: Sequence[CoverageDeclaration]) -> ReconcileOutcome:
    if db.session.get_bind().dialect.name == "postgresql":
        # Two reconciles at once (two start-ups) would both insert version N+1; the second waits.
        db.session.execute(text("LOCK TABLE export_coverage_versions IN SHARE ROW EXCLUSIVE MODE"))
    recorded = {(row.dataset, row.schema_version): row for row in db.session.scalars(select(CoverageDataset))}
    conflicts = [
        f"dataset {d.dataset!r} schema version {d.schema_version} is recorded with content hash "
        f"{recorded[(d.dataset, d.schema_version)].content_hash} but its columns now hash to {d.content_hash}; "
        f"give the changed columns a new schema version (now {d.schema_version}) instead"
        for d in declarations
        if (d.dataset, d.schema_version) in recorded
        and recorded[(d.dataset, d.schema_version)].content_hash != d.content_hash
    ]
    if conflicts:
        raise CoverageConflict("; ".join(conflicts) + ". Nothing was changed.")

    outcome = ReconcileOutcome()
    for declaration in declarations:
        row = recorded.get((declaration.dataset, declaration.schema_version))
        if row is None:
            db.session.add(
                CoverageDataset(
                    dataset=declaration.dataset,
                    schema_version=declaration.schema_version,
                    status=declaration.status.value,
                    content_hash=declaration.content_hash,
                )
            )
            outcome.inserted.append(
                f"{declaration.dataset} v{declaration.schema_version} recorded ({declaration.status.value})"
            )
        elif row.status != declaration.status.value:
            outcome.status_changes.append(
                f"{declaration.dataset} v{declaration.schema_version} {row.status} → {declaration.status.value}"
            )
            row.status = declaration.status.value

    current = db.session.scalar(select(CoverageVersion.version).order_by(CoverageVersion.version.desc()).limit(1))
    if outcome.changes:
        current = (current or 0) + 1
        db.session.add(CoverageVersion(version=current, summary="; ".join(outcome.changes)))
        outcome.advanced = True
    outcome.registry_version = current
    db.session.flush()
    return outcome
