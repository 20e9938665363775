"""What an administrator needs to set up an S3 destination by role: Rhythm's principal (the
installation's AWS_DELIVERY_PRINCIPAL_ARN), the workspace's external id and the trust policy to
paste into the role. The external id is made the first time it is asked for and kept: a role set
up with it keeps working, and no other workspace ever has it.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app
from sqlalchemy import select, update

from app.domain.destinations.role_trust import new_external_id, trust_policy
from app.extensions import db, execute_dml
from app.models import Workspace


@dataclass(frozen=True)
class RoleSetup:
    principal_arn: str
    external_id: str
    trust_policy: str


def principal_arn() -> str | None:
    """Rhythm's principal that customers' roles trust; None when this installation has none."""
    return current_app.config["SETTINGS"].aws_delivery_principal_arn


def external_id(workspace_id: int) -> str:
    """The workspace's external id, made now if it has none yet. Commits."""
    # Only a workspace without one gets one: two pages opened at once keep the first made.
    execute_dml(
        update(Workspace)
        .where(Workspace.id == workspace_id, Workspace.aws_external_id.is_(None))
        .values(aws_external_id=new_external_id())
        .execution_options(synchronize_session=False)
    )
    db.session.commit()
    found = db.session.scalar(select(Workspace.aws_external_id).where(Workspace.id == workspace_id))
    if found is None:
        raise LookupError(f"workspace {workspace_id} does not exist")
    return found


def role_setup(workspace_id: int) -> RoleSetup | None:
    """What the destination form shows for a role; None when roles are not available here."""
    principal = principal_arn()
    if principal is None:
        return None
    made = external_id(workspace_id)
    return RoleSetup(principal, made, trust_policy(principal, made))
