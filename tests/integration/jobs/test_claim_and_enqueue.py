"""The one claim-then-enqueue every dispatcher uses (app/services/work/queue.py): the database claim
decides who enqueues, and a Redis outage after the claim loses nothing."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from rq.job import Job

from app.extensions import db
from app.models.export_execution import ExportExecution
from app.models.types import utcnow
from app.services.work import claims, engine
from app.services.work.queue import (
    FAILURE_TTL_SECONDS,
    ClaimedJob,
    WorkPriority,
    claim_and_enqueue,
    enqueue_claimed,
    redis_connection,
    work_queue,
)
from app.services.work.work_kind import LOST_AFTER
from app.services.workspace_export.execution_work import EXECUTIONS
from tests import factories
from tests.fixtures.workers import queues_unreachable


def bulk_jobs() -> list[str]:
    return work_queue(WorkPriority.BULK).get_job_ids()


@pytest.fixture
def redis_down(app, monkeypatch, free_port):
    """Until `.undo()`, the app's queues talk to a port where no Redis listens."""
    queues_unreachable(app, monkeypatch, free_port)
    return monkeypatch


def _job(execution: ExportExecution, job_id: str) -> ClaimedJob:
    return ClaimedJob(
        EXECUTIONS.job_function, execution.id, job_id, f"workspace export {execution.id}", WorkPriority.BULK
    )


def _claim_and_enqueue(execution: ExportExecution, job_id: str) -> bool:
    """The execution's first dispatch under `job_id`, through the helper under test."""
    return claim_and_enqueue(lambda: claims.claim(EXECUTIONS, execution.id, None, job_id), _job(execution, job_id))


def _jobs_of_two_claimed_executions(world) -> list[ClaimedJob]:
    """Jobs for queued executions of two workspaces (each workspace has one at most)."""
    executions = [factories.make_execution(workspace) for workspace in (world.workspace, world.other_workspace)]
    return [_job(execution, f"package-execution-batch-{execution.id}") for execution in executions]


def _claimed_job_id(execution_id: int) -> str | None:
    db.session.rollback()
    return db.session.get(ExportExecution, execution_id, populate_existing=True).job_id


def test_a_claimed_row_has_its_job_enqueued_with_the_export_timeout_and_a_week_of_failures(app, world):
    execution = factories.make_execution(world.workspace)

    assert _claim_and_enqueue(execution, "package-execution-claimed") is True

    queued = Job.fetch("package-execution-claimed", connection=redis_connection())
    assert (queued.func_name, queued.args, queued.description) == (
        EXECUTIONS.job_function,
        (execution.id,),
        f"workspace export {execution.id}",
    )
    assert (queued.timeout, queued.failure_ttl) == (app.config["SETTINGS"].export_job_timeout, FAILURE_TTL_SECONDS)
    assert queued.origin == f"{app.config['SETTINGS'].export_queue}-bulk"


def test_a_refused_claim_enqueues_nothing(world):
    execution = factories.make_execution(world.workspace, status="cancelled")

    assert _claim_and_enqueue(execution, "package-execution-refused") is False

    assert bulk_jobs() == []
    assert _claimed_job_id(execution.id) is None


def test_with_redis_down_the_claim_stays_and_the_lost_job_check_enqueues_it_once_redis_is_back(world, redis_down):
    execution = factories.make_execution(world.workspace)

    assert _claim_and_enqueue(execution, "package-execution-during-outage") is False
    redis_down.undo()

    assert _claimed_job_id(execution.id) == "package-execution-during-outage"
    assert bulk_jobs() == []
    assert engine.redispatch_lost(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 1
    assert bulk_jobs() == [_claimed_job_id(execution.id)]


def test_a_batch_of_claimed_rows_is_enqueued_in_one_call(world):
    jobs = _jobs_of_two_claimed_executions(world)

    assert enqueue_claimed(jobs) == 2

    assert sorted(bulk_jobs()) == sorted(job.job_id for job in jobs)


def test_with_redis_down_a_batch_enqueues_none_and_the_log_names_each_job(world, redis_down, caplog):
    jobs = _jobs_of_two_claimed_executions(world)

    with caplog.at_level(logging.WARNING, logger="app.services.work.queue"):
        assert enqueue_claimed(jobs) == 0
    redis_down.undo()

    assert bulk_jobs() == []
    assert all(job.job_id in caplog.text for job in jobs)
    assert "the periodic dispatcher will dispatch it again once the lost-job check finds it" in caplog.text
