"""The workspaces a person can open: the live ones they are a member of."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from app.extensions import db
from app.models import Membership, Workspace


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
