"""A workspace's audit log as its administrators read it: every audited event with who, when,
what and why, newest first, filtered by action, person and date, in keyset pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.orm import aliased

from app.extensions import db
from app.models import AuditEvent, Person
from app.services import keyset

# What each action means, for people; an action not listed shows as its name.
ACTION_LABELS = {
    "schedule.deleted": "Schedule deleted",
    "schedule.refreshed": "Schedule's query refreshed",
    "schedule.paused": "Schedule paused",
    "schedule.resumed": "Schedule resumed",
    "schedule.ownership_taken": "Schedule ownership taken",
    "schedule.run_requested": "Schedule run requested",
    "export.suspended": "Workspace export suspended by Rhythm staff",
    "export.resumed": "Workspace export resumed by Rhythm staff",
    "export.execution_stopped": "Workspace export marked failed by Rhythm staff",
    "job.requeued": "Job dispatched again by Rhythm staff",
}


@dataclass(frozen=True)
class AuditFilters:
    action: str | None = None
    actor_id: int | None = None
    since: date | None = None
    until: date | None = None
    cursor: keyset.Cursor | None = None
    problems: tuple[str, ...] = field(default=())

    def query_args(self) -> dict[str, str]:
        args = {
            "action": self.action,
            "actor": str(self.actor_id) if self.actor_id else None,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
        }
        return {name: value for name, value in args.items() if value}


def parse_filters(args) -> AuditFilters:
    problems = []

    actor_raw = (args.get("actor") or "").strip()
    actor_id = int(actor_raw) if actor_raw.isdigit() and 0 < int(actor_raw) < 2**31 else None
    if actor_raw and actor_id is None:
        problems.append("That person is not one of the list; showing everyone's actions.")
    return AuditFilters(
        action=(args.get("action") or "").strip()[:80] or None,
        actor_id=actor_id,
        since=keyset.day_filter(args, "since", "from", problems),
        until=keyset.day_filter(args, "until", "to", problems),
        cursor=keyset.Cursor.decode(args.get("after")),
        problems=tuple(problems),
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


def page(workspace_id: int, filters: AuditFilters) -> keyset.Page:
    """One page of the workspace's events (AuditLine rows) matching the filters."""
    actor = aliased(Person)
    statement = (
        select(AuditEvent, actor.name, actor.is_staff)
        .outerjoin(actor, actor.id == AuditEvent.actor_id)
        .where(AuditEvent.workspace_id == workspace_id)
    )
    if filters.action:
        statement = statement.where(AuditEvent.action == filters.action)
    if filters.actor_id:
        statement = statement.where(AuditEvent.actor_id == filters.actor_id)
    if filters.since:
        statement = statement.where(AuditEvent.created_at >= keyset.day_start(filters.since))
    if filters.until:
        statement = statement.where(AuditEvent.created_at < keyset.day_after(filters.until))
    rows = db.session.execute(
        keyset.newest_first(statement, AuditEvent.created_at, AuditEvent.id, filters.cursor)
    ).all()
    found = keyset.page_of(rows, lambda row: (row[0].created_at, row[0].id))
    return keyset.Page(
        [
            AuditLine(
                event.id,
                event.created_at,
                event.action,
                ACTION_LABELS.get(event.action, event.action),
                name,
                bool(is_staff),
                event.subject_type,
                event.subject_id,
                event.reason,
                event.details or {},
            )
            for event, name, is_staff in found.rows
        ],
        found.next_cursor,
    )


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
    return [(action, ACTION_LABELS.get(action, action)) for action in actions], [tuple(row) for row in people]
