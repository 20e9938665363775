"""Reports: what a person may see, and the create, update, delete and preview use cases.

A report presents a saved query, so it is visible to the people who may read that query's
dataset; only its owner or an administrator changes it. Every edit bumps the version (the
UPDATE is conditional on the version the person opened). Deleting a report leaves its files:
the database clears their reference (query_exports.report_id ON DELETE SET NULL) and they
keep their name, print parameters and history. A saved query that reports present cannot be
deleted, nor one that schedules send: app/services/schedules/source_removal.py names them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.access import RequesterContext, can_change
from app.domain.sources.catalog import DATASETS
from app.domain.sources.report_spec import validate_report
from app.domain.values.text_rules import database_id
from app.extensions import db, execute_dml
from app.models import Person, Report, SavedQuery
from app.models.report import PRINT_PARAMETERS, ReportKind
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.files.report_files import file_request
from app.services.pages.list_pages import ListFilter, ListRequest, ListSpec, Page, a_to_z, page_of, recently_changed
from app.services.sources.report_preview import ReportPreview, report_preview
from app.services.sources.versioned_update import commit_versioned_update

STORED_FIELDS = (
    "name",
    "kind",
    "columns",
    "code_column",
    "code_descriptions",
    "summary",
    *PRINT_PARAMETERS,
)


@dataclass(frozen=True)
class ReportListing:
    report: Report
    query: SavedQuery
    owner_name: str


def _listing_select():
    return (
        select(Report, SavedQuery, Person.name)
        .join(SavedQuery, SavedQuery.id == Report.source_query_id)
        .join(Person, Person.id == Report.owner_id)
    )


REPORT_LIST = ListSpec(
    name="reports",
    sorts={
        "name": a_to_z(Report.name, Report.id),
        "updated": recently_changed(Report.updated_at, Report.id),
    },
    filters={
        "kind": ListFilter(
            "Kind", {ReportKind.TABLE: "Table", ReportKind.CODED: "Coded", ReportKind.SUMMARY: "Summary"}
        )
    },
    search_columns=(Report.name, SavedQuery.name),
)


def page_reports(access: RequesterContext, request: ListRequest) -> Page:
    """One page of the workspace's reports whose query's dataset the person may read, searched,
    filtered and ordered as asked."""
    readable = [name for name in DATASETS if access.can_read_dataset(name)]
    statement = _listing_select().where(
        Report.workspace_id == access.workspace_id,
        SavedQuery.workspace_id == access.workspace_id,
        SavedQuery.dataset.in_(readable),
    )
    if "kind" in request.filters:
        statement = statement.where(Report.kind == request.filters["kind"])
    page = page_of(REPORT_LIST, request, statement)
    return page.with_rows([ReportListing(*row) for row in page.rows])


def list_reports(access: RequesterContext) -> list[ReportListing]:
    """The workspace's reports whose query's dataset the person may read, by name."""
    rows = db.session.execute(
        _listing_select()
        .where(Report.workspace_id == access.workspace_id, SavedQuery.workspace_id == access.workspace_id)
        .order_by(func.lower(Report.name), Report.id)
    ).all()
    return [ReportListing(*row) for row in rows if access.can_read_dataset(row[1].dataset)]


def get_report(access: RequesterContext, report_id: int) -> ReportListing | None:
    """One report of the workspace, or None when it is not there or its dataset is not readable."""
    row = db.session.execute(
        _listing_select().where(
            Report.id == report_id,
            Report.workspace_id == access.workspace_id,
            SavedQuery.workspace_id == access.workspace_id,
        )
    ).one_or_none()
    if row is None or not access.can_read_dataset(row[1].dataset):
        return None
    return ReportListing(*row)


def usable_queries(access: RequesterContext) -> list[SavedQuery]:
    """The saved queries a report of this person can present."""
    queries = (
        db.session.execute(
            select(SavedQuery)
            .where(SavedQuery.workspace_id == access.workspace_id)
            .order_by(func.lower(SavedQuery.name), SavedQuery.id)
        )
        .scalars()
        .all()
    )
    return [q for q in queries if access.can_read_dataset(q.dataset)]


def source_query(access: RequesterContext, query_id: object) -> SavedQuery:
    """The saved query a report form names, checked against the workspace and the person's access."""
    wanted = database_id(query_id)
    if wanted is None:
        raise ValidationError("Choose the saved query the report presents.", "source_query_id")
    query = db.session.execute(
        select(SavedQuery).where(SavedQuery.id == wanted, SavedQuery.workspace_id == access.workspace_id)
    ).scalar_one_or_none()
    if query is None or not access.can_read_dataset(query.dataset):
        raise ValidationError("Choose the saved query the report presents.", "source_query_id")
    return query


def create_report(access: RequesterContext, data: dict) -> Report:
    """Save a new report from the form's data (see report_spec.validate_report for its shape)."""
    query = source_query(access, data.get("source_query_id"))
    checked = validate_report(data, query.dataset, list(query.columns))
    _refuse_taken_name(access, checked["name"], excluding_id=None)
    now = utcnow()
    report = Report(
        workspace_id=access.workspace_id,
        owner_id=access.person_id,
        source_query_id=query.id,
        version=1,
        created_at=now,
        updated_at=now,
        **{key: checked[key] for key in STORED_FIELDS},
    )
    db.session.add(report)
    try:
        db.session.flush()
        _audit(access, "report.created", report.id, {"name": checked["name"], "source_query_id": query.id})
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise _refusal_after_conflict(access, checked["name"], excluding_id=None) from None
    return report


def update_report(access: RequesterContext, report: Report, data: dict, expected_version: int | None) -> Report:
    """Save the edited report and bump its version, unless someone saved it after it was opened."""
    if not can_change(access, report):
        raise AccessDenied("Only the report's owner or an administrator can change it.")
    query = source_query(access, data.get("source_query_id"))
    checked = validate_report(data, query.dataset, list(query.columns))
    _refuse_taken_name(access, checked["name"], excluding_id=report.id)
    version = report.version if expected_version is None else expected_version
    try:
        result = execute_dml(
            update(Report)
            .where(Report.id == report.id, Report.workspace_id == access.workspace_id, Report.version == version)
            .values(
                source_query_id=query.id,
                version=Report.version + 1,
                updated_at=utcnow(),
                **{key: checked[key] for key in STORED_FIELDS},
            )
            .execution_options(synchronize_session=False)
        )
    except IntegrityError:
        db.session.rollback()
        raise _refusal_after_conflict(access, checked["name"], excluding_id=report.id) from None
    if result.rowcount == 1:
        _audit(access, "report.changed", report.id, {"name": checked["name"], "version": version + 1})
    return commit_versioned_update(result, report, "report")


def remove_report(access: RequesterContext, report: Report) -> None:
    """Delete the report and audit it, not committed: app/services/schedules/source_removal.py checks
    the person may, and pauses the report's schedules in the same transaction."""
    deleted = execute_dml(delete(Report).where(Report.id == report.id, Report.workspace_id == access.workspace_id))
    if deleted.rowcount == 1:
        _audit(access, "report.deleted", report.id, {"name": report.name})


def reports_using_query(workspace_id: int, query_id: int) -> list[str]:
    """Names of the workspace's reports that present the saved query, by name."""
    return list(
        db.session.execute(
            select(Report.name)
            .where(Report.workspace_id == workspace_id, Report.source_query_id == query_id)
            .order_by(func.lower(Report.name))
        ).scalars()
    )


def _refuse_taken_name(access: RequesterContext, name: str, excluding_id: int | None) -> None:
    clash = select(Report.id).where(Report.workspace_id == access.workspace_id, func.lower(Report.name) == name.lower())
    if excluding_id is not None:
        clash = clash.where(Report.id != excluding_id)
    if db.session.execute(clash.limit(1)).first() is not None:
        raise _name_taken()


def _refusal_after_conflict(access: RequesterContext, name: str, excluding_id: int | None) -> ValidationError:
    """What a constraint refused while saving: the name (taken at the same moment) or the query (deleted)."""
    try:
        _refuse_taken_name(access, name, excluding_id)
    except ValidationError as taken:
        return taken
    return ValidationError("The saved query was deleted meanwhile. Choose another one.", "source_query_id")


def _name_taken() -> ValidationError:
    return ValidationError("Another report in this workspace already has that name.", "name")


PREVIEW_ROWS = 30


def preview_report(access: RequesterContext, report: Report, query: SavedQuery) -> ReportPreview:
    """The first page of a file of the report as it would print now, read with the person's access."""
    request, print_params = file_request(report, query, utcnow().date())
    return report_preview(request, print_params, access, access.workspace_id, PREVIEW_ROWS)


def draft_report(access: RequesterContext, data: dict) -> tuple[Report, SavedQuery]:
    """An unsaved report from the form's data, validated, for previewing before it is saved."""
    query = source_query(access, data.get("source_query_id"))
    checked = validate_report(data, query.dataset, list(query.columns))
    report = Report(
        workspace_id=access.workspace_id,
        owner_id=access.person_id,
        source_query_id=query.id,
        version=0,
        **{key: checked[key] for key in STORED_FIELDS},
    )
    return report, query


def _audit(access: RequesterContext, action: str, report_id: int, details: dict) -> None:
    """A change to the workspace's reports, audited in the change's own transaction."""
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action=action,
        subject_type="report",
        subject_id=report_id,
        details=details,
    )
