"""The export-file transitions refuse to move a file from a status they do not start from."""

from __future__ import annotations

import pytest

from app.domain import export_file
from app.domain.errors import TransitionRefused
from tests.fixtures.workers import file_row


def test_start_refuses_a_failed_file(export_scenario):
    """A failed file never runs again."""
    export = export_scenario.request_file("csv")
    export_file.fail(export.id, "access_lost", "Lost access.")

    with pytest.raises(TransitionRefused):
        export_file.start(export.id)
    assert file_row(export.id).status == "failed"


def test_succeed_refuses_a_queued_file(export_scenario):
    """Only a running file can succeed."""
    export = export_scenario.request_file("csv")

    with pytest.raises(TransitionRefused):
        export_file.succeed(export.id, size_bytes=10, row_count=1, retention_days=30)
    assert file_row(export.id).status == "queued"


def test_fail_refuses_a_succeeded_file(export_scenario):
    """A succeeded file never changes again."""
    export = export_scenario.request_file("csv")
    export_file.start(export.id)
    export_file.succeed(export.id, size_bytes=10, row_count=1, retention_days=30)

    with pytest.raises(TransitionRefused):
        export_file.fail(export.id, "internal", "Too late.")
    assert file_row(export.id).status == "succeeded"


def test_progress_is_refused_once_the_file_settled(export_scenario):
    """Progress from a worker that missed the settlement is refused (the worker then stops)."""
    export = export_scenario.request_file("csv")
    export_file.start(export.id)
    export_file.fail(export.id, "timeout", "Given up.")

    with pytest.raises(TransitionRefused):
        export_file.record_progress(export.id, rows_written=5, rows_total=10)
    assert file_row(export.id).rows_written == 0
