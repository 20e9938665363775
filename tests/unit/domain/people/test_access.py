"""What a requester context allows: datasets, the rows of which teams, and granted authorities."""

from __future__ import annotations

from app.domain.people.access import SCHEDULE_MANAGEMENT, RequesterContext, has_schedule_authority


def context(role: str = "member", *, datasets=(), teams=None, grants=()) -> RequesterContext:
    return RequesterContext(
        workspace_id=1,
        person_id=7,
        role=role,
        dataset_grants=frozenset(datasets),
        team_scope=None if teams is None else frozenset(teams),
        grants=frozenset(grants),
    )


def test_a_member_reads_only_the_datasets_granted():
    member = context(datasets={"timesheet_entries"})
    assert member.can_read_dataset("timesheet_entries")
    assert not member.can_read_dataset("people")


def test_an_administrator_reads_every_dataset_without_grants():
    assert context("admin").can_read_dataset("people")


def test_a_team_scoped_member_sees_only_those_teams_rows():
    assert context(teams={3, 4}).row_scope == frozenset({3, 4})


def test_a_member_without_team_scope_sees_every_teams_rows():
    assert context().row_scope is None


def test_an_administrators_team_scope_is_ignored():
    """An administrator sees every team's rows even when the membership row still holds a scope."""
    assert context("admin", teams={3}).row_scope is None


def test_schedule_authority_comes_from_the_grant():
    assert has_schedule_authority(context(grants={SCHEDULE_MANAGEMENT}))
    assert not has_schedule_authority(context(grants={"something.else"}))


def test_an_administrator_holds_schedule_authority_without_the_grant():
    assert has_schedule_authority(context("admin"))
