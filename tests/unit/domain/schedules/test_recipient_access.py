"""Recipients share a file when their access makes the same file, whoever they are."""

from __future__ import annotations

from app.domain.people.access import RequesterContext
from app.domain.schedules.recipient_access import description, key


def access(person_id: int, role: str = "member", teams=(1, 2), datasets=("timesheet_entries",), grants=()):
    return RequesterContext(
        workspace_id=7,
        person_id=person_id,
        role=role,
        dataset_grants=frozenset(datasets),
        team_scope=None if teams is None else frozenset(teams),
        grants=frozenset(grants),
    )


def file_key(requester: RequesterContext) -> str:
    return key(description(requester, "timesheet_entries"))


def test_two_people_with_the_same_row_scope_share_a_key_whatever_else_differs():
    assert file_key(access(1, teams=(2, 1))) == file_key(access(2, teams=(1, 2), grants=("schedules.manage",)))
    assert file_key(access(1, datasets=("timesheet_entries", "shifts"))) == file_key(access(2))


def test_another_row_scope_gives_another_key():
    assert file_key(access(1, teams=(1,))) != file_key(access(2, teams=(1, 2)))
    assert file_key(access(1, teams=None)) != file_key(access(2, teams=()))


def test_an_administrator_sees_every_team_as_does_a_member_without_a_scope():
    assert file_key(access(1, role="admin", teams=(1,))) == file_key(access(2, teams=None))


def test_another_dataset_gives_another_key():
    assert key(description(access(1), "shifts")) != file_key(access(1))
