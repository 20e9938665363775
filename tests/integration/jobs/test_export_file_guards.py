"""The export-file transitions refuse to move a file from a status, or for an attempt, they do not start from."""

from __future__ import annotations

import pytest

from app.domain import export_file
from app.domain.errors import TransitionRefused
from app.models.export_file import FailureCode, FileStatus
from tests.fixtures.workers import file_row


def test_start_refuses_a_failed_file(export_scenario):
    """A failed file never runs again."""
    export = export_scenario.request_file("csv")
    export_file.fail(export.id, 0, FailureCode.ACCESS_LOST, "Lost access.")

    with pytest.raises(TransitionRefused):
        export_file.start(export.id)
    assert file_row(export.id).status == FileStatus.FAILED


def test_start_numbers_each_attempt(export_scenario):
    """Each start, the first and every restart, returns the attempt number the file now records."""
    export = export_scenario.request_file("csv")

    assert export_file.start(export.id) == 1
    assert export_file.start(export.id) == 2
    assert file_row(export.id).attempt_count == 2


def test_succeed_refuses_a_queued_file(export_scenario):
    """Only a running file can succeed."""
    export = export_scenario.request_file("csv")

    with pytest.raises(TransitionRefused):
        export_file.succeed(export.id, 0, size_bytes=10, row_count=1, retention_days=30)
    assert file_row(export.id).status == FileStatus.QUEUED


def test_fail_refuses_a_succeeded_file(export_scenario):
    """A succeeded file never changes again."""
    export = export_scenario.request_file("csv")
    attempt = export_file.start(export.id)
    export_file.succeed(export.id, attempt, size_bytes=10, row_count=1, retention_days=30)

    with pytest.raises(TransitionRefused):
        export_file.fail(export.id, attempt, FailureCode.INTERNAL, "Too late.")
    assert file_row(export.id).status == FileStatus.SUCCEEDED


def test_progress_is_refused_once_the_file_settled(export_scenario):
    """Progress from a worker that missed the settlement is refused (the worker then stops)."""
    export = export_scenario.request_file("csv")
    attempt = export_file.start(export.id)
    export_file.fail(export.id, attempt, FailureCode.TIMEOUT, "Given up.")

    with pytest.raises(TransitionRefused):
        export_file.record_progress(export.id, attempt, rows_written=5, rows_total=10)
    assert file_row(export.id).rows_written == 0


def test_a_stale_attempt_cannot_succeed_a_restarted_file(export_scenario):
    """After a restart, the earlier attempt's success is refused; the file stays running for the newer one."""
    export = export_scenario.request_file("csv")
    stale = export_file.start(export.id)
    export_file.start(export.id)

    with pytest.raises(TransitionRefused):
        export_file.succeed(export.id, stale, size_bytes=10, row_count=1, retention_days=30)
    row = file_row(export.id)
    assert (row.status, row.size_bytes, row.row_count) == (FileStatus.RUNNING, None, None)


def test_a_stale_attempt_cannot_fail_a_restarted_file(export_scenario):
    """After a restart, the earlier attempt's failure is refused."""
    export = export_scenario.request_file("csv")
    stale = export_file.start(export.id)
    export_file.start(export.id)

    with pytest.raises(TransitionRefused):
        export_file.fail(export.id, stale, FailureCode.STORAGE_ERROR, "The stale attempt's upload was aborted.")
    row = file_row(export.id)
    assert (row.status, row.failure_code) == (FileStatus.RUNNING, None)


def test_a_stale_attempt_cannot_record_progress(export_scenario):
    """After a restart, the earlier attempt's progress (its heartbeat) is refused, so it stops."""
    export = export_scenario.request_file("csv")
    stale = export_file.start(export.id)
    current = export_file.start(export.id)
    export_file.record_progress(export.id, current, rows_written=3, rows_total=10)

    with pytest.raises(TransitionRefused):
        export_file.record_progress(export.id, stale, rows_written=9, rows_total=10)
    assert file_row(export.id).rows_written == 3


def test_a_queued_file_cannot_be_failed_for_an_attempt_it_has_moved_past(export_scenario):
    """A pre-run check that saw no attempt cannot fail a file another delivery has started since."""
    export = export_scenario.request_file("csv")
    export_file.start(export.id)

    with pytest.raises(TransitionRefused):
        export_file.fail(export.id, 0, FailureCode.ACCESS_LOST, "Seen before the start.")
    assert file_row(export.id).status == FileStatus.RUNNING
