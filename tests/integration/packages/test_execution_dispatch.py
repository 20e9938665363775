"""Dispatching workspace exports onto RQ: claimed in the row first, enqueued after; again when lost."""

from __future__ import annotations

from datetime import timedelta

from rq import Queue

from app.extensions import db
from app.models.export_execution import ExportExecution
from app.models.types import utcnow
from app.services.work import claims, engine
from app.services.work.queue import WorkPriority, work_queue
from app.services.workspace_export.execution_work import EXECUTIONS
from tests import factories


def _queue(app) -> Queue:
    return work_queue(WorkPriority.BULK)


def _job_id(execution_id: int) -> str | None:
    db.session.rollback()
    return db.session.get(ExportExecution, execution_id, populate_existing=True).job_id


def test_the_pending_turn_enqueues_an_execution_never_dispatched(app, export_world):
    execution = factories.make_execution(export_world.workspace, export_world.admin)

    assert claims.dispatch_pending(EXECUTIONS) == 1

    job = _queue(app).fetch_job(_job_id(execution.id))
    assert job.func_name == "jobs.package_execution.run" and job.args == (execution.id,)
    assert claims.dispatch_pending(EXECUTIONS) == 0


def test_a_dispatch_from_a_stale_job_id_is_refused(app, export_world):
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    assert claims.dispatch(EXECUTIONS, execution.id, None)
    first_job = _job_id(execution.id)

    # A second dispatcher that also saw "no job yet" loses: the row names the first job.
    assert not claims.dispatch(EXECUTIONS, execution.id, None)
    assert _job_id(execution.id) == first_job
    assert _queue(app).job_ids == [first_job]


def test_a_settled_execution_is_not_dispatched(app, export_world):
    execution = factories.make_execution(export_world.workspace, export_world.admin, status="cancelled")

    assert not claims.dispatch(EXECUTIONS, execution.id, None)
    assert _queue(app).job_ids == []


def test_a_queued_execution_whose_job_redis_lost_is_dispatched_again(app, export_world):
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    claims.claim(EXECUTIONS, execution.id, None, "package-execution-lost", now=utcnow() - timedelta(minutes=5))

    assert engine.redispatch_lost(utcnow()) == 1

    new_job = _job_id(execution.id)
    assert new_job != "package-execution-lost"
    assert _queue(app).job_ids == [new_job]


def test_a_queued_execution_whose_job_waits_in_the_queue_is_left_alone(app, export_world):
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    claims.dispatch(EXECUTIONS, execution.id, None)
    job = _job_id(execution.id)

    assert engine.redispatch_lost(utcnow() + timedelta(minutes=5)) == 0
    assert _job_id(execution.id) == job
