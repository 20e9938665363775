"""A workspace's audit log as its administrators read it: every audited event with who, when,
what and why, newest first, filtered by action, person and date, a page at a time (the list
machinery of app/services/pages/list_pages.py); and, with the same filters, a CSV file of it made
through the product's export-file path (admission here, production in audit_file_production.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from app.data import audit_events
from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.access import RequesterContext
from app.domain.people.audit_vocabulary import Change, action_sentence, changes, reason_sentence
from app.domain.sources.stored_request import AuditSelection
from app.extensions import db
from app.models import AuditEvent, ExportFile, Person
from app.models.export_file import FileFormat, FileKind
from app.models.types import utcnow
from app.services.files.file_requests import admit, new_file
from app.services.pages import list_pages
from app.vocabulary import Heading

SOURCE_NAME = "Audit log"


AUDIT_LIST = list_pages.ListSpec(
    name="audit",
    sorts={"newest": list_pages.newest_first(AuditEvent.created_at, AuditEvent.id)},
    filters={
        "action": list_pages.ListFilter("What", kind=list_pages.TEXT),
        "actor": list_pages.ListFilter("Who", kind=list_pages.NUMBER),
        "since": list_pages.ListFilter("From", kind=list_pages.DAY),
        "until": list_pages.ListFilter("To", kind=list_pages.DAY),
    },
    search_columns=(),
    page_size=50,
)


def selection_of(request: list_pages.ListRequest) -> AuditSelection:
    """The events the audit page's filters keep."""
    return AuditSelection(
        action=request.filters.get("action"),
        actor_id=request.number("actor"),
        since=request.day("since"),
        until=request.day("until"),
    )


@dataclass(frozen=True)
class AuditLine:
    id: int
    created_at: datetime
    action: str
    label: str
    actor_name: str | None
    actor_is_staff: bool
    subject_type: str
    subject_id: int
    reason: str | None
    details: dict
    changes: list[Change]


def page(access: RequesterContext, request: list_pages.ListRequest) -> list_pages.Page:
    """One page of the workspace's events (AuditLine rows) matching the request's filters."""
    found = list_pages.page_of(AUDIT_LIST, request, audit_events.events_statement(access, selection_of(request)))
    lines = [
        AuditLine(
            event_id,
            created_at,
            action,
            action_sentence(action),
            actor_name,
            bool(actor_is_staff),
            subject_type,
            subject_id,
            reason_sentence(reason) or None,
            details or {},
            changes(details),
        )
        for event_id, created_at, actor_name, actor_is_staff, action, subject_type, subject_id, reason, details in (
            found.rows
        )
    ]
    return found.with_rows(lines)


def request_csv_file(
    access: RequesterContext,
    request: list_pages.ListRequest,
    request_token: str | None = None,
    dispatch_now: bool = True,
) -> ExportFile:
    """Admit a CSV file of the events the audit page's filters keep, for an administrator.

    `request_token` is the request form's one-time token: a form sent again answers its first file.
    The events are read when the file is produced, with the requester's access as it is then.
    """
    if not access.is_admin:
        raise AccessDenied("Only the workspace's administrators may export its audit log.")
    now = utcnow()
    return admit(
        new_file(
            access,
            source_name=SOURCE_NAME,
            file_format=FileFormat.CSV,
            requested_at=now,
            kind=FileKind.AUDIT,
            # The audit log has no versions; the column holds one for every kind of file.
            source_version=1,
            request=selection_of(request).to_json(),
            heading=Heading.NAMES,
            request_token=request_token,
        ),
        dispatch_now,
    )


def page_args(export: ExportFile) -> dict[str, str]:
    """The audit page's URL arguments that show the events an audit log file was asked with, so a
    new file can be requested from there; none when its stored filters cannot be read."""
    try:
        selection = AuditSelection.from_json(export.request)
    except ValidationError:
        return {}
    args = {
        "action": selection.action,
        "actor": str(selection.actor_id) if selection.actor_id else None,
        "since": selection.since.isoformat() if selection.since else None,
        "until": selection.until.isoformat() if selection.until else None,
    }
    return {name: value for name, value in args.items() if value}


def selection_facts(export: ExportFile) -> list[tuple[str, str]]:
    """What an audit log file holds, in words: (label, value) pairs for the file's page."""
    try:
        selection = AuditSelection.from_json(export.request)
    except ValidationError as unreadable:
        return [("Filters", str(unreadable))]
    actor = None
    if selection.actor_id is not None:
        # Named only if they act in this workspace's log: an id typed into the URL names no one else.
        actor = db.session.scalar(
            select(Person.name)
            .join(AuditEvent, AuditEvent.actor_id == Person.id)
            .where(Person.id == selection.actor_id, AuditEvent.workspace_id == export.workspace_id)
            .limit(1)
        )
    return [
        ("What", action_sentence(selection.action) if selection.action else "Every action"),
        ("Who", actor or (f"person #{selection.actor_id}" if selection.actor_id else "Everyone")),
        ("From", selection.since.isoformat() if selection.since else "the first event"),
        ("To", selection.until.isoformat() if selection.until else "the day the file was made"),
    ]


def actions_and_people(workspace_id: int) -> tuple[list[tuple[str, str]], list[tuple[int, str]]]:
    """The actions and the people that appear in the workspace's log, for the filter lists."""
    actions = db.session.scalars(
        select(AuditEvent.action).where(AuditEvent.workspace_id == workspace_id).distinct().order_by(AuditEvent.action)
    ).all()
    people = db.session.execute(
        select(Person.id, Person.name)
        .join(AuditEvent, AuditEvent.actor_id == Person.id)
        .where(AuditEvent.workspace_id == workspace_id)
        .distinct()
        .order_by(Person.name)
    ).all()
    return [(action, action_sentence(action)) for action in actions], [tuple(row) for row in people]
