"""Access rules: who may read which dataset rows, reconstructed from the database when work runs.

The requester context is the membership as it is now, never as it was when a file was asked
for (DESIGN §4): a worker calls `current_context` right before producing the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import select

from app.extensions import db
from app.models import Membership, Workspace


@dataclass(frozen=True)
class RequesterContext:
    workspace_id: int
    person_id: int
    role: str
    dataset_grants: frozenset[str]
    team_scope: frozenset[int] | None
    grants: frozenset[str]

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def can_read_dataset(self, dataset: str) -> bool:
        """Administrators read every dataset; members read the datasets they were granted."""
        return self.is_admin or dataset in self.dataset_grants

    @property
    def row_scope(self) -> frozenset[int] | None:
        """The teams whose rows are visible, or None for every team."""
        return None if self.is_admin else self.team_scope

    def has_grant(self, grant: str) -> bool:
        return self.is_admin or grant in self.grants

    @classmethod
    def of(cls, membership: Membership) -> RequesterContext:
        return cls(
            workspace_id=membership.workspace_id,
            person_id=membership.person_id,
            role=membership.role,
            dataset_grants=frozenset(membership.dataset_grants or ()),
            team_scope=None if membership.team_scope is None else frozenset(membership.team_scope),
            grants=frozenset(membership.grants or ()),
        )


#: The grant of schedule-management authority: every schedule of the workspace, its files and
#: the message templates. Administrators hold it without the grant.
SCHEDULE_MANAGEMENT = "schedules.manage"


def has_schedule_authority(access: RequesterContext) -> bool:
    return access.has_grant(SCHEDULE_MANAGEMENT)


class Owned(Protocol):
    """A workspace record with an owner: a saved query or a report."""

    workspace_id: int
    owner_id: int


def can_change(access: RequesterContext, record: Owned) -> bool:
    """Only the record's owner, or an administrator of its workspace, changes or deletes it."""
    return record.workspace_id == access.workspace_id and (access.is_admin or record.owner_id == access.person_id)


def current_context(workspace_id: int, person_id: int) -> RequesterContext | None:
    """The person's access in the workspace as the database holds it now; None if it is gone.

    A workspace that is not live grants nobody anything.
    """
    membership = db.session.execute(
        select(Membership)
        .join(Workspace, Workspace.id == Membership.workspace_id)
        .where(
            Membership.workspace_id == workspace_id,
            Membership.person_id == person_id,
            Workspace.status == "live",
        )
    ).scalar_one_or_none()
    return None if membership is None else RequesterContext.of(membership)
