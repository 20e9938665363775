"""The periodic scheduler as a real process (`flask scheduler`), next to a real worker."""

from __future__ import annotations

import signal

from tests.fixtures.workers import file_row, run_scheduler_tick, wait_for


def test_scheduler_process_dispatches_the_outbox_to_a_worker(
    export_scenario, isolated_storage, start_scheduler, start_worker
):
    """With a scheduler and a worker running, an admitted file is produced without anything else."""
    export_scenario.add_timesheet_rows(10)
    export = export_scenario.request_file("csv")
    start_worker()
    start_scheduler()

    wait_for(lambda: file_row(export.id).is_settled, what="the file to settle")

    produced = file_row(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    assert isolated_storage.list_keys("files/") == [produced.storage_key]


def test_scheduler_stops_cleanly_on_sigterm(app_context, start_scheduler):
    """SIGTERM ends the loop after the task in progress, with exit status 0."""
    scheduler = start_scheduler()
    wait_for(lambda: "scheduler started" in scheduler.output(), timeout=30, what="the scheduler to start")

    scheduler.process.send_signal(signal.SIGTERM)

    assert scheduler.process.wait(timeout=15) == 0
    assert "scheduler stopped" in scheduler.output()


def test_one_scheduler_tick_dispatches_a_new_file(export_scenario, isolated_storage):
    """The in-process tick runs every periodic task once; the work engine's dispatch enqueues the new file."""
    export_scenario.request_file("csv")

    handled = run_scheduler_tick()

    assert handled["dispatch pending work"] == 1
    assert handled["sweep expired files"] == 0
