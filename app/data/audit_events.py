"""Reading a workspace's audit log: its events with who made them, for the audit page and its CSV file.

Only the workspace's administrators read it. Every statement here is built from the reader's
access (for a file, as it is when the file is produced, not when it was asked for): anyone else
is refused, and the events are those of the access's workspace alone.
"""

from __future__ import annotations

from collections.abc import Generator

from sqlalchemy import Select, func, select
from sqlalchemy.orm import aliased

from app.data.days import within_days
from app.data.query_runner import stream_rows
from app.domain.errors import AccessDenied
from app.domain.people.access import RequesterContext
from app.domain.sources.stored_request import AuditSelection
from app.extensions import db
from app.models import AuditEvent, Person


def events_statement(access: RequesterContext, selection: AuditSelection) -> Select:
    """The workspace's events the selection keeps, in no order, each as (id, created_at, actor_name,
    actor_is_staff, action, subject_type, subject_id, reason, details); the actor's name and flag
    are NULL for the product's own actions. AccessDenied unless `access` is an administrator's."""
    if not access.is_admin:
        raise AccessDenied("Only the workspace's administrators may read its audit log.")
    actor = aliased(Person)
    statement = (
        select(
            AuditEvent.id,
            AuditEvent.created_at,
            actor.name.label("actor_name"),
            actor.is_staff.label("actor_is_staff"),
            AuditEvent.action,
            AuditEvent.subject_type,
            AuditEvent.subject_id,
            AuditEvent.reason,
            AuditEvent.details,
        )
        .outerjoin(actor, actor.id == AuditEvent.actor_id)
        .where(AuditEvent.workspace_id == access.workspace_id)
    )
    if selection.action is not None:
        statement = statement.where(AuditEvent.action == selection.action)
    if selection.actor_id is not None:
        statement = statement.where(AuditEvent.actor_id == selection.actor_id)
    return statement.where(*within_days(AuditEvent.created_at, selection.since, selection.until))


def count_events(access: RequesterContext, selection: AuditSelection) -> int:
    selected = events_statement(access, selection).subquery()
    return db.session.execute(select(func.count()).select_from(selected)).scalar_one()


def iter_events(
    access: RequesterContext, selection: AuditSelection, batch_size: int = 2000
) -> Generator[tuple, None, None]:
    """The selected events newest first (the later id first at the same moment), streamed.

    Access is checked at the call; close the iterator (or exhaust it) to give its connection back.
    """
    statement = events_statement(access, selection).order_by(AuditEvent.created_at.desc(), AuditEvent.id.desc())
    return stream_rows(statement, batch_size)
