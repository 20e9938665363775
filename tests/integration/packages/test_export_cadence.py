"""The export cadence: one execution per period whoever ticks, refusals skip the period with an
audit event, and the cadence always moves on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent
from app.models.export_execution import ExportExecution
from app.models.export_settings import ExportSettings
from app.services.workspace_export.export_cadence import admit_due_cadences
from tests import factories
from tests.fixtures.workers import wait_for
from tests.integration.packages.threads import in_thread

# Daily at 02:00 UTC; the tick runs at 02:00:30 on 2026-12-01.
NOW = datetime(2026, 12, 1, 2, 0, 30, tzinfo=UTC)
DUE = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)


def _daily(export_world, **changes) -> ExportSettings:
    settings = export_world.settings
    settings.cadence = "daily"
    settings.cadence_time = "02:00"
    settings.next_cadence_at = DUE
    for name, value in changes.items():
        setattr(settings, name, value)
    db.session.commit()
    return settings


def _executions() -> list[ExportExecution]:
    db.session.rollback()
    return list(db.session.scalars(select(ExportExecution).order_by(ExportExecution.id)))


def _next_cadence_at(settings: ExportSettings) -> datetime | None:
    db.session.rollback()
    return db.session.get(ExportSettings, settings.id, populate_existing=True).next_cadence_at


def test_a_due_cadence_admits_one_execution_for_its_period_and_moves_on(export_world):
    settings = _daily(export_world)

    assert admit_due_cadences(NOW, dispatch=False) == 1

    [execution] = _executions()
    assert (execution.trigger, execution.cadence_key, execution.requested_by_id) == (
        "cadence",
        "daily:2026-12-01",
        None,
    )
    assert _next_cadence_at(settings) == DUE + timedelta(days=1)
    [event] = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "export.execution_admitted")).all()
    assert event.actor_id is None and event.details["cadence_key"] == "daily:2026-12-01"


def test_a_cadence_not_yet_due_admits_nothing(export_world):
    settings = _daily(export_world, next_cadence_at=DUE + timedelta(hours=1))

    assert admit_due_cadences(NOW, dispatch=False) == 0
    assert _executions() == []
    assert _next_cadence_at(settings) == DUE + timedelta(hours=1)


def test_a_period_already_admitted_is_not_admitted_again(export_world):
    settings = _daily(export_world)
    factories.make_execution(
        export_world.workspace, trigger="cadence", cadence_key="daily:2026-12-01", status="succeeded"
    )

    admit_due_cadences(NOW, dispatch=False)

    assert len(_executions()) == 1
    assert _next_cadence_at(settings) == DUE + timedelta(days=1)


def test_missed_periods_admit_only_the_latest(export_world):
    settings = _daily(export_world, next_cadence_at=DUE - timedelta(days=3))

    admit_due_cadences(NOW, dispatch=False)

    assert [e.cadence_key for e in _executions()] == ["daily:2026-12-01"]
    assert _next_cadence_at(settings) == DUE + timedelta(days=1)


def test_a_refused_period_is_skipped_with_an_audit_event_and_not_retried(export_world):
    settings = _daily(export_world)
    running = factories.make_execution(export_world.workspace, export_world.admin, status="running")

    admit_due_cadences(NOW, dispatch=False)

    assert [e.id for e in _executions()] == [running.id]
    [skipped] = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "export.cadence_skipped")).all()
    assert skipped.subject_id == settings.id and "already queued or running" in skipped.reason
    assert skipped.details == {"cadence_key": "daily:2026-12-01", "running_execution_id": running.id}
    assert _next_cadence_at(settings) == DUE + timedelta(days=1)
    # The next tick of the same period finds nothing due.
    assert admit_due_cadences(NOW + timedelta(minutes=1), dispatch=False) == 0


def test_a_period_beyond_the_allowance_is_skipped(export_world):
    _daily(export_world)
    export_world.workspace.export_allowance = 0
    db.session.commit()

    admit_due_cadences(NOW, dispatch=False)

    assert _executions() == []
    [skipped] = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "export.cadence_skipped")).all()
    assert "used all 0 exports" in skipped.reason


def test_paused_settings_are_not_ticked(export_world):
    settings = _daily(export_world, status="paused")

    assert admit_due_cadences(NOW, dispatch=False) == 0
    assert _executions() == []
    assert _next_cadence_at(settings) == DUE


def test_two_schedulers_ticking_at_once_admit_the_period_once(app, export_world, hold_lock):
    settings = _daily(export_world)
    lock = hold_lock("LOCK TABLE data_export_definitions IN ACCESS EXCLUSIVE MODE")
    tickers = [in_thread(app, lambda: admit_due_cadences(NOW, dispatch=False)) for _ in range(2)]
    wait_for(lambda: lock.waiters() == 2, what="both schedulers to wait for the settings table")
    lock.release()
    for thread, _ in tickers:
        thread.join(30)

    assert [outcome.error for _, outcome in tickers] == [None, None]
    assert sorted(outcome.value for _, outcome in tickers) == [0, 1]
    assert [e.cadence_key for e in _executions()] == ["daily:2026-12-01"]
    assert _next_cadence_at(settings) == DUE + timedelta(days=1)
