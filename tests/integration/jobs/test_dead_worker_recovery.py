"""Leases with real workers: a killed worker's file is redelivered within a minute, a slow live one never is.

To hold a worker inside one long step, the test takes an exclusive lock on the timesheet table:
the worker's query waits for it, alive, writing no progress, until the lock is released.
"""

from __future__ import annotations

import time

import pytest

from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.engine import redeliver_lapsed
from app.services.work.work_kind import LOST_AFTER
from tests.fixtures.workers import (
    a_query_waits_for_the_timesheet_lock,
    file_row,
    pending_uploads,
    timesheet_locked,
    wait_for,
    worker_name,
)

#: The issue's target: a file whose worker died completes within this many seconds of the kill.
RECOVERY_SECONDS = 60
SHORT_LEASE_SECONDS = 2


def test_file_whose_worker_was_killed_completes_within_a_minute_with_default_settings(
    export_scenario, isolated_storage, start_worker, start_scheduler
):
    """SIGKILL of a worker and its work-horse mid-file: with default settings the file succeeds within 60 s."""
    export_scenario.add_timesheet_rows(50)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    with timesheet_locked():
        first = start_worker()
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the first worker to wait inside its query")
        assert file_row(export.id).lease_holder == worker_name(first)
        second = start_worker()
        start_scheduler()
        first.kill()

    wait_for(lambda: file_row(export.id).is_settled, timeout=RECOVERY_SECONDS, what="the file to settle after the kill")

    produced = file_row(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    assert (produced.attempt_count, produced.outbox.dispatch_count) == (2, 2)
    assert produced.lease_holder == worker_name(second)
    assert isolated_storage.list_keys("files/") == [produced.storage_key]
    assert pending_uploads(isolated_storage) == []


@pytest.mark.environment(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
def test_worker_slow_inside_one_step_keeps_its_file_for_many_lease_periods(
    export_scenario, isolated_storage, start_worker
):
    """A live worker stuck in one long step renews its lease: the watchdog never redelivers its file."""
    export_scenario.add_timesheet_rows(50)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    with timesheet_locked():
        start_worker()
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the worker to wait inside its query")
        # Past the dispatch's time in flight, then five more lease periods, judged every half second.
        watched_until = time.monotonic() + LOST_AFTER.total_seconds() + 5 * SHORT_LEASE_SECONDS
        while time.monotonic() < watched_until:
            assert redeliver_lapsed(utcnow()) == 0
            time.sleep(0.5)
        waiting = file_row(export.id)
        assert waiting.outbox.dispatched_at < utcnow() - LOST_AFTER
        assert waiting.heartbeat_at == waiting.started_at  # no progress written during the wait
        assert waiting.lease_expires_at > utcnow()

    wait_for(lambda: file_row(export.id).is_settled, timeout=60, what="the file to settle")

    produced = file_row(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    assert (produced.attempt_count, produced.outbox.dispatch_count) == (1, 1)
