"""A real worker takes a person's file before a backlog of scheduled runs, and still gives bulk work
its share (app/services/work/queue.py, jobs/worker.py)."""

from __future__ import annotations

from app.services.work.queue import FAIR_SHARE_EVERY, WorkPriority, redis_connection, work_queue
from tests.fixtures.probe_jobs import PROBE_LIST
from tests.fixtures.workers import wait_for

PROBE = "tests.fixtures.probe_jobs.note"
BACKLOG = 12


def _queue_probes(priority: WorkPriority, count: int) -> None:
    for number in range(count):
        work_queue(priority).enqueue(PROBE, f"{priority}-{number}")


def _run_order(expected: int) -> list[str]:
    wait_for(lambda: redis_connection().llen(PROBE_LIST) >= expected, timeout=60, what="the probe jobs to run")
    return [label.decode() for label in redis_connection().lrange(PROBE_LIST, 0, -1)]


def test_interactive_work_queued_behind_a_backlog_runs_first(app_context, start_worker):
    _queue_probes(WorkPriority.SCHEDULED, BACKLOG)
    _queue_probes(WorkPriority.BULK, BACKLOG)
    _queue_probes(WorkPriority.INTERACTIVE, 1)

    start_worker()

    assert _run_order(2 * BACKLOG + 1)[0] == "interactive-0"


def test_bulk_work_gets_a_turn_while_scheduled_work_is_waiting(app_context, start_worker):
    _queue_probes(WorkPriority.SCHEDULED, BACKLOG)
    _queue_probes(WorkPriority.BULK, BACKLOG)

    start_worker()

    first_turns = _run_order(2 * BACKLOG)[:FAIR_SHARE_EVERY]
    assert any(label.startswith("bulk-") for label in first_turns)
    assert first_turns[0].startswith("scheduled-")
