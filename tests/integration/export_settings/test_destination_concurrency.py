"""Two administrators adding destinations at the same moment on PostgreSQL: the limit of five and
the uniqueness of connection and path hold, and the loser gets a message, not an error."""

from __future__ import annotations

import threading

import pytest
from flask import current_app
from sqlalchemy import func, select, text

from app.domain.destinations.destination_input import DestinationInput
from app.domain.errors import ValidationError
from app.domain.people.access import current_context
from app.extensions import db
from app.models.export_destination import ExportDestination
from app.services.destinations import registry
from tests import factories
from tests.fixtures.workers import wait_for
from tests.integration.export_settings.forms import audit_events, s3_form


def _input(**overrides) -> DestinationInput:
    return DestinationInput(**{key: value for key, value in s3_form(**overrides).items()})


def _add_concurrently(app, workspace_id: int, people: list[int], inputs: list[DestinationInput]) -> list[object]:
    """Each input added by its own thread and session; returns each outcome (a row id or the refusal)."""
    outcomes: list[object] = [None] * len(inputs)

    def add(index: int) -> None:
        with app.app_context():
            try:
                access = current_context(workspace_id, people[index])
                outcomes[index] = registry.add(access, inputs[index]).id
            except ValidationError as refused:
                outcomes[index] = refused
            finally:
                db.session.remove()

    threads = [threading.Thread(target=add, args=(index,)) for index in range(len(inputs))]
    for thread in threads:
        thread.start()
    return threads, outcomes


def _sessions_waiting_for_locks() -> int:
    """Sessions of this database waiting for a lock: behind a row lock the second waiter queues on
    the first one, so the holder's own waiter count would say one."""
    return db.session.scalar(
        text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
    )


def _live_count(workspace_id: int) -> int:
    return db.session.scalar(
        select(func.count())
        .select_from(ExportDestination)
        .where(ExportDestination.workspace_id == workspace_id, ExportDestination.removed_at.is_(None))
    )


@pytest.fixture
def two_admins(world):
    second = factories.make_member(world.workspace, role="admin").person
    return world, [world.admin.id, second.id]


def test_two_concurrent_adds_to_four_destinations_make_five_not_six(app, two_admins, hold_lock):
    world, people = two_admins
    for n in range(4):
        factories.make_destination(world.workspace, path=f"existing/{n}")
    workspace_lock = hold_lock("SELECT id FROM workspaces WHERE id = :id FOR UPDATE", id=world.workspace.id)
    threads, outcomes = _add_concurrently(
        current_app._get_current_object(),
        world.workspace.id,
        people,
        [_input(name="Fifth", path="new/a"), _input(name="Sixth", path="new/b")],
    )
    try:
        wait_for(lambda: _sessions_waiting_for_locks() == 2, what="both adds waiting for the workspace lock")
    finally:
        workspace_lock.release()
        for thread in threads:
            thread.join(timeout=30)
    refusals = [outcome for outcome in outcomes if isinstance(outcome, ValidationError)]
    assert len(refusals) == 1 and "at most 5 destinations" in str(refusals[0])
    db.session.rollback()
    assert _live_count(world.workspace.id) == 5
    assert len(audit_events("export_destination.added")) == 1


def test_two_concurrent_adds_of_one_bucket_and_path_make_one(app, two_admins, hold_lock):
    world, people = two_admins
    workspace_lock = hold_lock("SELECT id FROM workspaces WHERE id = :id FOR UPDATE", id=world.workspace.id)
    threads, outcomes = _add_concurrently(
        current_app._get_current_object(), world.workspace.id, people, [_input(name="One"), _input(name="Two")]
    )
    try:
        wait_for(lambda: _sessions_waiting_for_locks() == 2, what="both adds waiting for the workspace lock")
    finally:
        workspace_lock.release()
        for thread in threads:
            thread.join(timeout=30)
    refusals = [outcome for outcome in outcomes if isinstance(outcome, ValidationError)]
    assert len(refusals) == 1 and "already delivers to this bucket and path" in str(refusals[0])
    db.session.rollback()
    assert _live_count(world.workspace.id) == 1
    assert len(audit_events("export_destination.added")) == 1
