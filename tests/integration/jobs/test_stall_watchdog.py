"""The watchdog: running files without a recent heartbeat get a new job; endless stalls end as timeout."""

from __future__ import annotations

from datetime import timedelta

from flask import current_app

from app.domain import export_file
from app.models.types import utcnow
from app.services.outbox import dispatch_pending
from app.services.queue import export_queue
from app.services.watchdog import MAX_ATTEMPTS, redeliver_stalled
from tests.fixtures.workers import file_row


def _stall_judged_at():
    return utcnow() + timedelta(seconds=current_app.config["SETTINGS"].stall_seconds + 1)


def _running_file(scenario):
    export = scenario.request_file("csv")
    dispatch_pending()
    export_file.start(export.id)
    return export


def test_running_file_without_heartbeat_is_dispatched_again(export_scenario):
    """A running file whose heartbeat is older than STALL_SECONDS gets a new job under a new id."""
    export = _running_file(export_scenario)

    assert redeliver_stalled(_stall_judged_at()) == 1

    outbox = file_row(export.id).outbox
    assert (outbox.dispatch_count, outbox.job_id) == (2, f"export-file-{export.id}-2")
    assert f"export-file-{export.id}-2" in export_queue().get_job_ids()
    assert file_row(export.id).status == "running"


def test_running_file_with_a_recent_heartbeat_is_left_alone(export_scenario):
    """A file whose worker reported progress within STALL_SECONDS is not redelivered."""
    export = _running_file(export_scenario)

    assert redeliver_stalled(utcnow()) == 0
    assert file_row(export.id).outbox.dispatch_count == 1


def test_queued_file_is_not_the_watchdogs_business(export_scenario):
    """Queued files are the lost-job check's concern; the watchdog judges running files only."""
    export = export_scenario.request_file("csv")
    dispatch_pending()

    assert redeliver_stalled(_stall_judged_at()) == 0
    assert file_row(export.id).outbox.dispatch_count == 1


def test_file_stalling_on_every_attempt_fails_with_timeout(export_scenario):
    """After MAX_ATTEMPTS stalled attempts the file is failed with timeout instead of looping forever."""
    export = _running_file(export_scenario)
    for _ in range(MAX_ATTEMPTS - 1):
        export_file.start(export.id)  # each redelivered attempt starts the file again
    assert file_row(export.id).attempt_count == MAX_ATTEMPTS

    assert redeliver_stalled(_stall_judged_at()) == 1

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code) == ("failed", "timeout")
    assert f"started {MAX_ATTEMPTS} times" in failed.failure_detail
    assert failed.outbox.dispatch_count == 1
