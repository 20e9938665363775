"""Reconcile the coverage registry with the declarations in code (INV-13), in one transaction.

A (dataset, schema version) not yet recorded is inserted; a declared status that differs
from the recorded one is updated; a recorded version no longer declared (its dataset removed
from the declarations, or given a new schema version) is retired, and the summary says so. A
recorded version whose content hash differs from the declaration is refused, and so are
declarations making two schema versions of one dataset active; then nothing at all is written.
A new registry version is added only when something changed, with a summary of what.

The registry is enforced, not only kept: package production asks `verified_registry_version`
first and refuses to produce while the registry and the declarations disagree (a deploy whose
start-up reconcile did not run, or was refused), /readyz says so, and every manifest names the
registry version it was made under.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select, text

from app.domain.workspace_export.coverage import DECLARATIONS, CoverageDeclaration, CoverageStatus
from app.extensions import db
from app.models.coverage import CoverageDataset, CoverageVersion


class CoverageConflict(Exception):
    """A declaration changed its columns without a new schema version, or two schema versions of
    one dataset are declared active.

    Outside DomainError: a release's mistake, reported by `flask coverage reconcile`, not a person's."""


class RegistryOutOfDate(Exception):
    """The recorded registry does not match the declarations in code: packages are refused.

    Outside DomainError: a deploy's state, signalled to package production, which fails the
    execution with a sentence of its own."""


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


@dataclass
class _Comparison:
    """How the declarations in code differ from the recorded registry."""

    conflicts: list[CoverageDeclaration] = field(default_factory=list)  # recorded with other columns
    unrecorded: list[CoverageDeclaration] = field(default_factory=list)
    status_changed: list[tuple[CoverageDeclaration, CoverageDataset]] = field(default_factory=list)
    # Recorded, not retired, and declared no more: reconcile retires them.
    undeclared: list[CoverageDataset] = field(default_factory=list)
    # Datasets declared active at more than one schema version, with those versions.
    active_twice: dict[str, list[int]] = field(default_factory=dict)


def _compare(declarations: Sequence[CoverageDeclaration]) -> _Comparison:
    recorded = {(row.dataset, row.schema_version): row for row in db.session.scalars(select(CoverageDataset))}
    comparison = _Comparison()
    active_versions: dict[str, list[int]] = {}
    for declaration in declarations:
        if declaration.status == CoverageStatus.ACTIVE:
            active_versions.setdefault(declaration.dataset, []).append(declaration.schema_version)
        row = recorded.get((declaration.dataset, declaration.schema_version))
        if row is None:
            comparison.unrecorded.append(declaration)
        elif row.content_hash != declaration.content_hash:
            comparison.conflicts.append(declaration)
        elif row.status != declaration.status.value:
            comparison.status_changed.append((declaration, row))
    declared = {(declaration.dataset, declaration.schema_version) for declaration in declarations}
    comparison.undeclared = [
        row
        for key, row in sorted(recorded.items())
        if key not in declared and row.status != CoverageStatus.RETIRED.value
    ]
    comparison.active_twice = {dataset: sorted(v) for dataset, v in sorted(active_versions.items()) if len(v) > 1}
    return comparison


def _active_twice_sentences(comparison: _Comparison) -> list[str]:
    return [
        f"dataset {dataset!r} is declared active at schema versions {', '.join(map(str, versions))}"
        for dataset, versions in comparison.active_twice.items()
    ]


def _current_version() -> int | None:
    return db.session.scalar(select(CoverageVersion.version).order_by(CoverageVersion.version.desc()).limit(1))


def _reconcile(declarations: Sequence[CoverageDeclaration]) -> ReconcileOutcome:
    if db.session.get_bind().dialect.name == "postgresql":
        # Two reconciles at once (two start-ups) would both insert version N+1; the second waits.
        db.session.execute(text("LOCK TABLE export_coverage_versions IN SHARE ROW EXCLUSIVE MODE"))
    comparison = _compare(declarations)
    if comparison.conflicts or comparison.active_twice:
        recorded = {
            (row.dataset, row.schema_version): row.content_hash for row in db.session.scalars(select(CoverageDataset))
        }
        problems = [
            f"dataset {d.dataset!r} schema version {d.schema_version} is recorded with content hash "
            f"{recorded[(d.dataset, d.schema_version)]} but its columns now hash to {d.content_hash}; "
            f"give the changed columns a new schema version (now {d.schema_version}) instead"
            for d in comparison.conflicts
        ]
        problems += [
            f"{sentence}; a package carries one version of a dataset, so declare only one active"
            for sentence in _active_twice_sentences(comparison)
        ]
        raise CoverageConflict("; ".join(problems) + ". Nothing was changed.")

    outcome = ReconcileOutcome()
    for declaration in comparison.unrecorded:
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
    for declaration, row in comparison.status_changed:
        outcome.status_changes.append(
            f"{declaration.dataset} v{declaration.schema_version} {row.status} → {declaration.status.value}"
        )
        row.status = declaration.status.value
    for row in comparison.undeclared:
        outcome.status_changes.append(
            f"{row.dataset} v{row.schema_version} {row.status} → {CoverageStatus.RETIRED.value} (no longer declared)"
        )
        row.status = CoverageStatus.RETIRED.value

    current = _current_version()
    if outcome.changes:
        current = (current or 0) + 1
        db.session.add(CoverageVersion(version=current, summary="; ".join(outcome.changes)))
        outcome.advanced = True
    outcome.registry_version = current
    db.session.flush()
    return outcome


def registry_disagreement(declarations: Sequence[CoverageDeclaration] = DECLARATIONS) -> str | None:
    """None when the recorded registry matches the declarations in code; else a sentence for the
    operator saying how it differs (`flask coverage reconcile` records them, or refuses a conflict)."""
    comparison = _compare(declarations)
    problems = [f"{d.dataset} v{d.schema_version} is recorded with other columns" for d in comparison.conflicts]
    problems += [f"{d.dataset} v{d.schema_version} is not recorded" for d in comparison.unrecorded]
    problems += [
        f"{d.dataset} v{d.schema_version} is recorded {row.status} but declared {d.status.value}"
        for d, row in comparison.status_changed
    ]
    problems += [
        f"{row.dataset} v{row.schema_version} is recorded {row.status} but no longer declared"
        for row in comparison.undeclared
    ]
    problems += _active_twice_sentences(comparison)
    if not problems and _current_version() is None:
        problems.append("no registry version is recorded")
    if not problems:
        return None
    return "The coverage registry does not match the declarations in code: " + "; ".join(problems) + "."


def verified_registry_version() -> int:
    """The registry version a package is made under; RegistryOutOfDate when the registry and the
    declarations disagree (a package would then carry datasets the registry does not describe)."""
    disagreement = registry_disagreement()
    version = _current_version()
    if disagreement is not None or version is None:
        raise RegistryOutOfDate(disagreement or "no registry version is recorded")
    return version
