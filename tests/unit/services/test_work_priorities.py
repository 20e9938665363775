"""The order a worker looks at the queues in (app/services/work/queue.py): highest priority first, with a
fair share for the lower ones."""

from __future__ import annotations

from app.services.work.queue import FAIR_SHARE_EVERY, WorkPriority, listening_order, queue_name


def test_a_worker_looks_at_interactive_work_first_on_most_turns():
    ordinary_turns = [turn for turn in range(100) if turn % FAIR_SHARE_EVERY != FAIR_SHARE_EVERY - 1]

    assert all(
        listening_order(turn) == [WorkPriority.INTERACTIVE, WorkPriority.SCHEDULED, WorkPriority.BULK]
        for turn in ordinary_turns
    )


def test_every_run_of_turns_as_long_as_the_fair_share_looks_at_bulk_work_first_once():
    for start in range(50):
        firsts = [listening_order(turn)[0] for turn in range(start, start + FAIR_SHARE_EVERY)]
        assert firsts.count(WorkPriority.BULK) == 1


def test_scheduled_work_comes_before_interactive_on_a_fair_share_turn():
    order = listening_order(FAIR_SHARE_EVERY - 1)

    assert order.index(WorkPriority.SCHEDULED) < order.index(WorkPriority.INTERACTIVE)


def test_the_interactive_queue_keeps_the_configured_name_so_older_jobs_are_still_taken():
    assert queue_name("exports", WorkPriority.INTERACTIVE) == "exports"
    assert {queue_name("exports", p) for p in (WorkPriority.SCHEDULED, WorkPriority.BULK)} == {
        "exports-scheduled",
        "exports-bulk",
    }
