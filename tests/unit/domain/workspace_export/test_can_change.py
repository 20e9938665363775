"""Who changes a saved query or a report: its owner or an administrator of its workspace, nobody else."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.domain.people.access import RequesterContext, can_change


def _access(person_id: int, role: str = "member", workspace_id: int = 1) -> RequesterContext:
    return RequesterContext(
        workspace_id=workspace_id,
        person_id=person_id,
        role=role,
        dataset_grants=frozenset({"timesheet_entries"}),
        team_scope=None,
        grants=frozenset(),
    )


RECORD = SimpleNamespace(workspace_id=1, owner_id=7)


@pytest.mark.parametrize(
    ("access", "allowed"),
    [
        (_access(7), True),
        (_access(8, role="admin"), True),
        (_access(8), False),
        (_access(7, workspace_id=2), False),
        (_access(8, role="admin", workspace_id=2), False),
    ],
    ids=["owner", "administrator", "other-member", "owner-id-in-another-workspace", "other-workspace-admin"],
)
def test_only_the_owner_or_an_administrator_of_the_records_workspace_changes_it(access, allowed):
    assert can_change(access, RECORD) is allowed
