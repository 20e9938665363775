"""Saved queries: what a person may see, and the create, update, delete and preview use cases.

A member sees the workspace's queries on datasets they may read; the others do not exist for
them. Only the owner or an administrator changes a query. Every definition is validated by
app.domain.sources.query_spec before it is saved or run, and every read is scoped by workspace id.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from app.data import query_runner
from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.access import RequesterContext, can_change
from app.domain.sources.catalog import DATASETS, Column, Dataset
from app.domain.sources.query_spec import validate_definition
from app.domain.values.text_rules import refuse_line_breaks, refuse_unstorable
from app.extensions import db, execute_dml
from app.models import Person, SavedQuery
from app.models.types import utcnow
from app.rendering.cells import formatters_for
from app.rendering.dates import WorkspaceDates
from app.services.accounts import audit
from app.services.files.file_requests import workspace_dates
from app.services.pages.list_pages import ListRequest, ListSpec, Page, a_to_z, page_of, recently_changed
from app.services.sources.versioned_update import commit_versioned_update

NAME_LIMIT = 200
# A column holding more distinct values than this is filtered by typing, not from a list.
VALUE_LIST_LIMIT = 50


@dataclass(frozen=True)
class QueryListing:
    query: SavedQuery
    owner_name: str


def readable_datasets(access: RequesterContext) -> list[Dataset]:
    return [dataset for dataset in DATASETS.values() if access.can_read_dataset(dataset.name)]


QUERY_LIST = ListSpec(
    name="queries",
    sorts={
        "name": a_to_z(SavedQuery.name, SavedQuery.id),
        "updated": recently_changed(SavedQuery.updated_at, SavedQuery.id),
    },
    filters={},
    search_columns=(SavedQuery.name,),
)


def page_queries(access: RequesterContext, request: ListRequest) -> Page:
    """One page of the workspace's queries on datasets the person may read, searched and ordered as asked."""
    readable = [dataset.name for dataset in readable_datasets(access)]
    statement = (
        select(SavedQuery, Person.name)
        .join(Person, Person.id == SavedQuery.owner_id)
        .where(SavedQuery.workspace_id == access.workspace_id, SavedQuery.dataset.in_(readable))
    )
    page = page_of(QUERY_LIST, request, statement)
    return page.with_rows([QueryListing(*row) for row in page.rows])


def list_queries(access: RequesterContext) -> list[QueryListing]:
    """The workspace's queries on datasets the person may read, by name."""
    readable = [dataset.name for dataset in readable_datasets(access)]
    rows = db.session.execute(
        select(SavedQuery, Person.name)
        .join(Person, Person.id == SavedQuery.owner_id)
        .where(SavedQuery.workspace_id == access.workspace_id, SavedQuery.dataset.in_(readable))
        .order_by(func.lower(SavedQuery.name), SavedQuery.id)
    ).all()
    return [QueryListing(query, owner_name) for query, owner_name in rows]


def get_query(access: RequesterContext, query_id: int) -> QueryListing | None:
    """One query of the workspace, or None when it is not there or its dataset is not readable."""
    row = db.session.execute(
        select(SavedQuery, Person.name)
        .join(Person, Person.id == SavedQuery.owner_id)
        .where(SavedQuery.id == query_id, SavedQuery.workspace_id == access.workspace_id)
    ).one_or_none()
    if row is None or not access.can_read_dataset(row[0].dataset):
        return None
    return QueryListing(*row)


def create_query(access: RequesterContext, name: str, definition: dict) -> SavedQuery:
    name = _checked_name(access, name, excluding_id=None)
    checked = _checked_definition(access, definition)
    now = utcnow()
    query = SavedQuery(
        workspace_id=access.workspace_id,
        owner_id=access.person_id,
        name=name,
        version=1,
        created_at=now,
        updated_at=now,
        **_stored_fields(checked),
    )
    db.session.add(query)
    try:
        db.session.flush()
    except IntegrityError:
        db.session.rollback()
        raise _name_taken() from None
    _audit(access, "query.created", query.id, {"name": name, "dataset": checked["dataset"]})
    _commit_or_name_taken()
    return query


def update_query(
    access: RequesterContext, query: SavedQuery, name: str, definition: dict, expected_version: int | None
) -> SavedQuery:
    """Save a new definition and bump the version.

    The UPDATE is conditional on the version the person opened (when the form sent it), so two
    people editing at once cannot silently overwrite each other.
    """
    if not can_change(access, query):
        raise AccessDenied("Only the query's owner or an administrator can change it.")
    name = _checked_name(access, name, excluding_id=query.id)
    checked = _checked_definition(access, definition)
    version = query.version if expected_version is None else expected_version
    try:
        result = execute_dml(
            update(SavedQuery)
            .where(
                SavedQuery.id == query.id,
                SavedQuery.workspace_id == access.workspace_id,
                SavedQuery.version == version,
            )
            .values(name=name, version=SavedQuery.version + 1, updated_at=utcnow(), **_stored_fields(checked))
            .execution_options(synchronize_session=False)
        )
    except IntegrityError:
        db.session.rollback()
        raise _name_taken() from None
    if result.rowcount == 1:
        _audit(access, "query.changed", query.id, {"name": name, "version": version + 1})
    return commit_versioned_update(result, query, "query")


def remove_query(access: RequesterContext, query: SavedQuery) -> None:
    """Delete the query and audit it, not committed: app/services/schedules/source_removal.py checks
    the person may and that nothing presents or sends it. Files made from it keep their name and
    request (their link is cleared)."""
    deleted = execute_dml(
        delete(SavedQuery).where(SavedQuery.id == query.id, SavedQuery.workspace_id == access.workspace_id)
    )
    if deleted.rowcount == 1:
        _audit(access, "query.deleted", query.id, {"name": query.name})


@dataclass(frozen=True)
class Preview:
    """The first rows of a saved query, each cell as the (spreadsheet-safe) CSV export writes it
    except dates and times, which are in the workspace's format and zone (named in `time_zone`);
    `total` rows match in all, of which a file holds `file_rows` (fewer under a row limit)."""

    columns: list[Column]
    rows: list[list[str]]
    total: int
    file_rows: int
    time_zone: str


def preview(access: RequesterContext, definition: dict) -> Preview:
    """The first rows a file of this definition would hold, and how many it holds in all, read
    with the person's own access."""
    checked = _checked_definition(access, definition)
    settings = current_app.config["SETTINGS"]
    read = query_runner.preview_rows(checked, access, limit=settings.max_preview_rows)
    return formatted_preview(read, workspace_dates(access.workspace_id))


def formatted_preview(read: query_runner.PreviewRows, dates: WorkspaceDates) -> Preview:
    """Typed preview rows with each cell turned into text: dates as the workspace shows them,
    the rest as the CSV export writes it."""
    on_screen = {"date": dates.date_text, "datetime": dates.datetime_text}
    formatters = [
        on_screen.get(column.type, written)
        for column, written in zip(read.columns, formatters_for(read.columns), strict=True)
    ]
    return Preview(
        columns=read.columns,
        rows=[[format_value(value) for format_value, value in zip(formatters, row, strict=True)] for row in read.rows],
        total=read.total,
        file_rows=read.file_rows,
        time_zone=dates.time_zone,
    )


def offered_values(access: RequesterContext, dataset_name: str, column_name: str) -> list[str] | None:
    """The values a filter on this text column may pick from: those in the rows the person may
    read, when there are at most VALUE_LIST_LIMIT; None otherwise (the value is typed then)."""
    dataset = DATASETS.get(dataset_name)
    if dataset is None or not access.can_read_dataset(dataset.name):
        return None
    return query_runner.distinct_values(dataset, column_name, access, VALUE_LIST_LIMIT)


def _checked_definition(access: RequesterContext, definition: dict) -> dict:
    checked = validate_definition(definition, current_app.config["SETTINGS"].max_export_rows, saving=True)
    if not access.can_read_dataset(checked["dataset"]):
        raise ValidationError("You do not have access to that dataset.", "dataset")
    return checked


def _checked_name(access: RequesterContext, name: str, excluding_id: int | None) -> str:
    refuse_unstorable(name, "name", "the name")
    refuse_line_breaks(name or "", "name", "the name")
    name = " ".join((name or "").split())
    if not name:
        raise ValidationError("Give the query a name.", "name")
    if len(name) > NAME_LIMIT:
        raise ValidationError(f"The name is longer than {NAME_LIMIT} characters.", "name")
    clash = select(SavedQuery.id).where(
        SavedQuery.workspace_id == access.workspace_id, func.lower(SavedQuery.name) == name.lower()
    )
    if excluding_id is not None:
        clash = clash.where(SavedQuery.id != excluding_id)
    if db.session.execute(clash.limit(1)).first() is not None:
        raise _name_taken()
    return name


def _stored_fields(checked: dict) -> dict:
    return {key: checked[key] for key in ("dataset", "columns", "filters", "sort", "parameters", "row_limit")}


def _commit_or_name_taken() -> None:
    """The unique (workspace, name) index decides when two people save the same name at once."""
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise _name_taken() from None


def _name_taken() -> ValidationError:
    return ValidationError("Another query in this workspace already has that name.", "name")


def _audit(access: RequesterContext, action: str, query_id: int, details: dict) -> None:
    """A change to the workspace's saved queries, audited in the change's own transaction."""
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action=action,
        subject_type="saved_query",
        subject_id=query_id,
        details=details,
    )
