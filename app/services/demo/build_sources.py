"""Writes the demo administrator's starter saved queries and sample reports (data_sources.py),
validated and in the normal form the query builder and the Reports form save."""

from __future__ import annotations

from datetime import datetime

from flask import current_app

from app.domain.sources.query_spec import validate_definition
from app.domain.sources.report_spec import validate_report
from app.extensions import db
from app.models import Person, Report, SavedQuery, Workspace
from app.services.demo.data_sources import SAMPLE_REPORTS, SAVED_QUERIES
from app.services.sources.reports import STORED_FIELDS


def add_saved_queries(workspace: Workspace, owner: Person, now: datetime) -> dict[str, SavedQuery]:
    """The starter queries, by name."""
    max_rows = current_app.config["SETTINGS"].max_export_rows
    queries = {}
    for seed in SAVED_QUERIES:
        normal = validate_definition(seed.definition, max_rows)
        changed = now - seed.age
        queries[seed.name] = SavedQuery(
            workspace_id=workspace.id,
            owner_id=owner.id,
            name=seed.name,
            dataset=normal["dataset"],
            columns=normal["columns"],
            filters=normal["filters"],
            sort=normal["sort"],
            parameters=normal["parameters"],
            row_limit=normal["row_limit"],
            created_at=changed,
            updated_at=changed,
        )
    db.session.add_all(queries.values())
    db.session.flush()
    return queries


def add_sample_reports(
    workspace: Workspace, owner: Person, queries: dict[str, SavedQuery], now: datetime
) -> dict[str, Report]:
    """The sample reports over the starter queries, by name."""
    reports = {}
    for seed in SAMPLE_REPORTS:
        query = queries[seed.query]
        checked = validate_report(seed.definition, query.dataset, list(query.columns))
        changed = now - seed.age
        reports[checked["name"]] = Report(
            workspace_id=workspace.id,
            owner_id=owner.id,
            source_query_id=query.id,
            version=1,
            created_at=changed,
            updated_at=changed,
            **{key: checked[key] for key in STORED_FIELDS},
        )
    db.session.add_all(reports.values())
    db.session.flush()
    return reports
