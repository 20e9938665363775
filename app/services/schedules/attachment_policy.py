"""The workspace's attachment policy: read it, and change it (administrators, audited in the
same transaction). What the policy means is app/domain/schedules/attachment_rules.py."""

from __future__ import annotations

from sqlalchemy import select

from app.domain.people.access import RequesterContext
from app.domain.schedules.attachment_rules import checked_limit
from app.extensions import db
from app.models import Workspace
from app.services.accounts import audit


def limit_mb(workspace_id: int) -> int | None:
    """The largest attachment in MiB the workspace allows, or None for links only."""
    return db.session.scalar(select(Workspace.attachment_limit_mb).where(Workspace.id == workspace_id))


def save(access: RequesterContext, choice: str, limit_text: str) -> bool:
    """Set the policy the form asks for; False when it was already so (nothing written). The caller
    has checked that `access` is an administrator of the workspace."""
    wanted = checked_limit(choice, limit_text)
    workspace = db.session.scalar(select(Workspace).where(Workspace.id == access.workspace_id).with_for_update())
    if workspace is None or workspace.attachment_limit_mb == wanted:
        db.session.rollback()
        return False
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action="workspace.attachment_policy_changed",
        subject_type="workspace",
        subject_id=access.workspace_id,
        details={"changed": {"attachment_limit_mb": {"from": workspace.attachment_limit_mb, "to": wanted}}},
    )
    workspace.attachment_limit_mb = wanted
    db.session.commit()
    return True
