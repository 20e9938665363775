"""The work engine (app/services/work/) over every kind of background record, with real Redis."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
from flask import current_app
from redis import Redis
from sqlalchemy.exc import OperationalError

from app.domain.timing.retry_policy import RetryPolicy
from app.extensions import db
from app.models import ExportDelivery, ExportExecution, ExportFileRequest, ExportNotice, ScheduleRun
from app.models.types import utcnow
from app.services.work import candidates, engine, kinds
from app.services.work.claims import dispatch_pending
from app.services.work.queue import work_queue
from app.services.work.work_kind import LOST_AFTER, Candidate, WorkKind
from tests import factories


@dataclass(frozen=True)
class Queued:
    """A record of one kind, claimed and enqueued by the engine; `job_id()` reads its claim."""

    kind: WorkKind
    job_id: Callable[[], str | None]


def _claimed_job_id(model, record_id: int) -> Callable[[], str | None]:
    def read() -> str | None:
        db.session.rollback()
        return db.session.get_one(model, record_id, populate_existing=True).job_id

    return read


def _queued_file() -> Queued:
    workspace = factories.make_workspace()
    owner = factories.make_member(workspace).person
    export = factories.make_export(factories.make_query(workspace, owner), owner)
    assert dispatch_pending(kinds.FILES) == 1
    return Queued(kinds.FILES, _claimed_job_id(ExportFileRequest, export.outbox.id))


def _queued_run() -> Queued:
    workspace = factories.make_workspace()
    owner = factories.make_member(workspace).person
    schedule = factories.make_schedule(factories.make_query(workspace, owner), owner)
    run = factories.make_run(schedule, status="queued", attempt_count=0)
    assert dispatch_pending(kinds.RUNS, utcnow()) == 1
    return Queued(kinds.RUNS, _claimed_job_id(ScheduleRun, run.id))


def _queued_execution() -> Queued:
    execution = factories.make_execution(factories.make_workspace())
    assert dispatch_pending(kinds.EXECUTIONS) == 1
    return Queued(kinds.EXECUTIONS, _claimed_job_id(ExportExecution, execution.id))


def _queued_delivery() -> Queued:
    workspace = factories.make_workspace()
    package = factories.make_package(factories.make_execution(workspace))
    delivery = factories.make_package_delivery(
        package, factories.make_destination(workspace), created_at=utcnow() - 2 * LOST_AFTER
    )
    assert dispatch_pending(kinds.DELIVERIES, utcnow()) == 1
    return Queued(kinds.DELIVERIES, _claimed_job_id(ExportDelivery, delivery.id))


def _queued_notice() -> Queued:
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin").person
    package = factories.make_package(factories.make_execution(workspace))
    notice = factories.make_package_ready_notice(package, admin, created_at=utcnow() - 2 * LOST_AFTER)
    assert dispatch_pending(kinds.NOTICES, utcnow()) == 1
    return Queued(kinds.NOTICES, _claimed_job_id(ExportNotice, notice.id))


QUEUED_RECORDS = {
    "file": _queued_file,
    "run": _queued_run,
    "execution": _queued_execution,
    "delivery": _queued_delivery,
    "notice": _queued_notice,
}


def test_every_registered_kind_is_covered_here():
    assert set(QUEUED_RECORDS) == {kind.name for kind in kinds.WORK_KINDS}


@pytest.mark.parametrize("kind_name", list(QUEUED_RECORDS))
def test_one_redispatch_turn_after_redis_was_flushed_puts_every_kind_s_queued_job_back(app_context, kind_name):
    queued = QUEUED_RECORDS[kind_name]()
    flushed_job_id = queued.job_id()
    queue = work_queue(queued.kind.priority)
    assert queue.get_job_ids() == [flushed_job_id]
    Redis.from_url(current_app.config["SETTINGS"].redis_url).flushdb()

    assert engine.redispatch_lost(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 1

    redispatched_job_id = queued.job_id()
    assert redispatched_job_id != flushed_job_id
    assert redispatched_job_id.startswith(f"{queued.kind.slug}-")
    assert queue.get_job_ids() == [redispatched_job_id]
    assert queue.fetch_job(redispatched_job_id).func_name == queued.kind.job_function


def test_a_kind_whose_turn_fails_does_not_hold_up_the_other_kinds(app_context, monkeypatch, caplog):
    queued = _queued_execution()
    flushed_job_id = queued.job_id()
    Redis.from_url(current_app.config["SETTINGS"].redis_url).flushdb()

    lost = candidates.lost

    def files_unreachable(kind, now):
        if kind is kinds.FILES:
            raise OperationalError("SELECT …", {}, Exception("connection refused"))
        return lost(kind, now)

    monkeypatch.setattr(candidates, "lost", files_unreachable)

    assert engine.redispatch_lost(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 1

    assert queued.job_id() != flushed_job_id
    assert "redispatch lost failed for file" in caplog.text


@dataclass
class _Recorded:
    """What the engine asked of a made-up kind, in order."""

    calls: list[tuple[str, int]] = dataclasses.field(default_factory=list)

    def kind(self, monkeypatch, retries: RetryPolicy, lapsed: list[tuple[int, int]]) -> WorkKind:
        """A kind whose lapsed records are (record id, attempts used) pairs and whose actions are
        recorded; the engine is given it alone."""

        def candidate(record_id: int, used: int) -> Candidate:
            return Candidate(record_id, None, lambda: self._did("dispatch", record_id), used, used, "gone-worker")

        kind = dataclasses.replace(
            kinds.DELIVERIES,
            name="made-up",
            retries=retries,
            give_up=lambda candidate, now: self._did("give up", candidate.record_id),
            retry_later=lambda candidate, now, at: self._did(f"retry after {at - now}", candidate.record_id),
        )
        monkeypatch.setattr(engine, "WORK_KINDS", (kind,))
        monkeypatch.setattr(
            candidates, "lapsed", lambda kind, now: [candidate(record_id, used) for record_id, used in lapsed]
        )
        return kind

    def _did(self, action: str, record_id: int) -> bool:
        self.calls.append((action, record_id))
        return True


def test_a_lapsed_record_is_started_again_at_once_until_its_kind_s_last_attempt_then_given_up(app_context, monkeypatch):
    recorded = _Recorded()
    recorded.kind(monkeypatch, RetryPolicy(max_attempts=3), lapsed=[(1, 1), (2, 2), (3, 3)])

    assert engine.redeliver_lapsed(utcnow()) == 3

    assert recorded.calls == [("dispatch", 1), ("dispatch", 2), ("give up", 3)]


def test_a_lapsed_record_of_a_kind_with_a_backoff_waits_the_delay_its_policy_names(app_context, monkeypatch):
    recorded = _Recorded()
    backoff = (timedelta(minutes=1), timedelta(minutes=5))
    recorded.kind(monkeypatch, RetryPolicy(max_attempts=4, backoff=backoff), lapsed=[(1, 1), (2, 3), (3, 4)])

    assert engine.redeliver_lapsed(utcnow()) == 3

    assert recorded.calls == [("retry after 0:01:00", 1), ("retry after 0:05:00", 2), ("give up", 3)]


def test_a_kind_with_a_backoff_must_say_how_a_record_waits_for_it():
    with pytest.raises(ValueError, match="no way to wait"):
        dataclasses.replace(kinds.FILES, retries=RetryPolicy(max_attempts=2, backoff=(timedelta(minutes=1),)))
