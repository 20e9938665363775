"""The coverage registry's declarations (INV-13): which datasets a workspace package may carry.

Each catalog dataset is declared here with its status and schema version, and its content
hash: a SHA-256 of its column list (names and types, in order). `flask coverage reconcile`
(app/services/workspace_export/coverage.py) records the declarations in the database; a column list that
changes without a new schema version is refused there.

Every other table is excluded with a reason, so a table added later must be classified
deliberately: tests/unit/architecture/test_coverage_classification.py fails otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from app.domain.sources.catalog import DATASETS, Dataset


class CoverageStatus(StrEnum):
    ACTIVE = "active"  # packages include it when the settings choose it
    DEFERRED = "deferred"  # known and planned, not yet exported
    RETIRED = "retired"  # no longer exported; earlier packages keep it


def content_hash(columns: Iterable[tuple[str, str]]) -> str:
    """SHA-256 of the ordered (name, type) list, encoded canonically so it is stable everywhere."""
    canonical = json.dumps([[name, type_] for name, type_ in columns], separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class CoverageDeclaration:
    dataset: str
    status: CoverageStatus
    schema_version: int
    table: str
    columns: tuple[tuple[str, str], ...]

    @property
    def content_hash(self) -> str:
        return content_hash(self.columns)


def _declare(dataset: Dataset, status: CoverageStatus) -> CoverageDeclaration:
    return CoverageDeclaration(
        dataset=dataset.name,
        status=status,
        schema_version=dataset.schema_version,
        table=dataset.table.name,
        columns=tuple((column.name, column.type) for column in dataset.columns),
    )


DECLARATIONS: tuple[CoverageDeclaration, ...] = tuple(
    _declare(DATASETS[name], status)
    for name, status in (
        ("teams", CoverageStatus.ACTIVE),
        ("people", CoverageStatus.ACTIVE),
        ("shifts", CoverageStatus.ACTIVE),
        ("time_off_requests", CoverageStatus.ACTIVE),
        ("timesheet_entries", CoverageStatus.ACTIVE),
    )
)

_CONSOLE = "console data, not workspace content a data tool reads"

EXCLUDED_TABLES: dict[str, str] = {
    "workspaces": "the tenant itself; a package is already one workspace's",
    "people": "console sign-ins with password hashes and session tokens; the people dataset is data_people",
    "memberships": "console access rules; " + _CONSOLE,
    "saved_queries": "query definitions of the console; " + _CONSOLE,
    "reports": "report definitions of the console; " + _CONSOLE,
    "query_exports": "files produced by the console; their rows are the datasets, exported already",
    "query_export_requests": "outbox of export work; transient machinery",
    "schedules": "delivery schedules of the console; " + _CONSOLE,
    "schedule_runs": "schedule run history; operational records",
    "schedule_run_attempts": "schedule run attempts; operational records",
    "schedule_run_files": "the files of a run as each recipient; operational records",
    "query_schedule_recipients": "schedule recipients' addresses; " + _CONSOLE,
    "query_schedule_deliveries": "per-recipient delivery records; operational records",
    "schedule_destinations": "the destinations a schedule copies its files to; " + _CONSOLE,
    "schedule_destination_deliveries": "a schedule run's copies to destinations; operational records",
    "schedule_destination_delivery_attempts": "attempts of those copies; operational records",
    "schedule_unsubscribes": "recipients' unsubscriptions; personal data kept for the console only",
    "communication_templates": "email templates; " + _CONSOLE,
    "communication_template_versions": "email template history; " + _CONSOLE,
    "audit_events": "security audit trail; kept by the platform, never handed out in bulk",
    "export_coverage_datasets": "the coverage registry itself",
    "export_coverage_versions": "the coverage registry's versions",
    "data_export_definitions": "workspace export settings; " + _CONSOLE,
    "data_export_destinations": "customer storage connections with encrypted secrets; never exported",
    "data_export_executions": "workspace export executions; operational records",
    "data_export_job_events": "workspace export event logs; operational records",
    "data_export_artifacts": "the packages themselves; a package does not contain packages",
    "data_export_volumes": "package volume bookkeeping; operational records",
    "data_export_parts": "multipart upload bookkeeping; transient machinery",
    "data_export_deliveries": "package deliveries; operational records",
    "data_export_delivery_attempts": "package delivery attempts; operational records",
    "data_export_notices": "notice emails sent about exports; operational records",
}


def classification_problems(table_names: Iterable[str]) -> list[str]:
    """One sentence per table that is neither covered nor excluded with a reason, or is both.

    Names in the exclusions that are no table at all are reported too, so the list stays true.
    """
    names = set(table_names)
    covered = {declaration.table for declaration in DECLARATIONS}
    problems = []
    for name in sorted(names):
        reason = EXCLUDED_TABLES.get(name, "").strip()
        if name in covered and name in EXCLUDED_TABLES:
            problems.append(f"table {name!r} is both a covered dataset table and excluded; choose one")
        elif name not in covered and not reason:
            problems.append(
                f"table {name!r} is neither a covered dataset table "
                "(app/domain/workspace_export/coverage.py DECLARATIONS) nor excluded with a reason (EXCLUDED_TABLES)"
            )
    for name in sorted(set(EXCLUDED_TABLES) - names):
        problems.append(f"excluded table {name!r} does not exist; remove it from EXCLUDED_TABLES")
    return problems
