"""Removing what schedules send. A report's deletion pauses its active schedules with
`source_removed` in the same transaction; a saved query that reports present or schedules send
cannot be deleted, and the refusal names them. These use cases live with schedules because
they need both sides: app/services/sources knows nothing about schedules."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError

from app.domain.errors import AccessDenied
from app.domain.people.access import RequesterContext, can_change
from app.domain.sources.report_spec import QueryInUse
from app.extensions import db
from app.models import Report, SavedQuery
from app.services.schedules.schedules import pause_for_removed_report, schedules_using_query
from app.services.sources import reports, saved_queries


def delete_report(access: RequesterContext, report: Report) -> None:
    """Remove the report; its files stay, with their reference cleared by the database."""
    if not can_change(access, report):
        raise AccessDenied("Only the report's owner or an administrator can delete it.")
    pause_for_removed_report(access.workspace_id, access.person_id, report.id)
    reports.remove_report(access, report)
    db.session.commit()


def delete_query(access: RequesterContext, query: SavedQuery) -> None:
    """Remove the query, unless something uses it. A report or schedule added at the same moment
    is caught by the foreign key, and then named like any other."""
    if not can_change(access, query):
        raise AccessDenied("Only the query's owner or an administrator can delete it.")
    refuse_if_query_in_use(access.workspace_id, query.id)
    try:
        saved_queries.remove_query(access, query)
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        refuse_if_query_in_use(access.workspace_id, query.id)
        raise


def refuse_if_query_in_use(workspace_id: int, query_id: int) -> None:
    """Raise QueryInUse, naming them, when reports present the query or schedules send it."""
    report_names = reports.reports_using_query(workspace_id, query_id)
    schedule_names = schedules_using_query(workspace_id, query_id)
    if report_names or schedule_names:
        raise QueryInUse(report_names, schedule_names)
