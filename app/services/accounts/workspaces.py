"""The workspaces a person can open (the live ones they are a member of), and a workspace's members."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from app.extensions import db
from app.models import Membership, Person, Workspace


@dataclass(frozen=True)
class WorkspaceChoice:
    id: int
    name: str
    role: str


def live_workspaces_of(person_id: int) -> list[WorkspaceChoice]:
    """The person's live workspaces, by name (then id, so equal names keep one order)."""
    rows = db.session.execute(
        select(Workspace.id, Workspace.name, Membership.role)
        .join(Membership, Membership.workspace_id == Workspace.id)
        .where(Membership.person_id == person_id, Workspace.status == "live")
        .order_by(Workspace.name, Workspace.id)
    ).all()
    return [WorkspaceChoice(id=row.id, name=row.name, role=row.role) for row in rows]


def members_by_name(workspace_id: int) -> list[Person]:
    """The workspace's current members, by name (then id): the people a schedule may mail and
    workspace export may notify."""
    return list(
        db.session.scalars(
            select(Person)
            .join(Membership, Membership.person_id == Person.id)
            .where(Membership.workspace_id == workspace_id)
            .order_by(func.lower(Person.name), Person.id)
        )
    )
