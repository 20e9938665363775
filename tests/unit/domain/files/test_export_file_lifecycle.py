"""The export-file lifecycle (app/domain/files/export_file.py) on SQLite, the embedded default's engine:
each transition refuses to move a file from a status, or for an attempt, it does not start from.
The same guarded UPDATEs run on PostgreSQL in the integration tier (tests/integration/jobs)."""

from __future__ import annotations

import pytest

from app.domain.errors import TransitionRefused
from app.domain.files import export_file
from app.extensions import db
from app.models import ExportFile
from app.models.export_file import FailureCode, FileStatus
from app.models.types import DETAIL_LIMIT
from tests import factories


@pytest.fixture
def export(sqlite_app) -> ExportFile:
    """A queued file of a member's query, in a SQLite database of this test's own."""
    application = sqlite_app()
    with application.app_context():
        db.create_all()
        member = factories.make_member(factories.make_workspace())
        yield factories.make_export(factories.make_query(member.workspace, member.person), member.person)
        db.session.remove()


def _row(export: ExportFile) -> ExportFile:
    """The file as the database holds it now (nothing cached)."""
    db.session.rollback()
    return db.session.get(ExportFile, export.id, populate_existing=True)


def test_start_refuses_a_failed_file(export):
    """A failed file never runs again."""
    export_file.fail(export.id, 0, FailureCode.ACCESS_LOST, "Lost access.")

    with pytest.raises(TransitionRefused):
        export_file.start(export.id)
    assert _row(export).status == FileStatus.FAILED


def test_start_numbers_each_attempt(export):
    """Each start, the first and every restart, returns the attempt number the file now records."""
    assert export_file.start(export.id) == 1
    assert export_file.start(export.id) == 2
    assert _row(export).attempt_count == 2


def test_succeed_refuses_a_queued_file(export):
    """Only a running file can succeed."""
    with pytest.raises(TransitionRefused):
        export_file.succeed(export.id, 0, size_bytes=10, row_count=1, retention_days=30)
    assert _row(export).status == FileStatus.QUEUED


def test_succeed_records_size_rows_and_the_expiry_from_completion(export):
    attempt = export_file.start(export.id)

    export_file.succeed(export.id, attempt, size_bytes=10, row_count=3, retention_days=30)

    row = _row(export)
    assert (row.status, row.size_bytes, row.row_count, row.rows_written) == (FileStatus.SUCCEEDED, 10, 3, 3)
    assert (row.expires_at - row.completed_at).days == 30


def test_fail_refuses_a_succeeded_file(export):
    """A succeeded file never changes again."""
    attempt = export_file.start(export.id)
    export_file.succeed(export.id, attempt, size_bytes=10, row_count=1, retention_days=30)

    with pytest.raises(TransitionRefused):
        export_file.fail(export.id, attempt, FailureCode.INTERNAL, "Too late.")
    assert _row(export).status == FileStatus.SUCCEEDED


def test_a_failure_detail_is_cut_to_its_limit(export):
    export_file.fail(export.id, 0, FailureCode.INTERNAL, "x" * (DETAIL_LIMIT + 50))

    assert len(_row(export).failure_detail) == DETAIL_LIMIT


def test_progress_is_refused_once_the_file_settled(export):
    """Progress from a worker that missed the settlement is refused (the worker then stops)."""
    attempt = export_file.start(export.id)
    export_file.fail(export.id, attempt, FailureCode.TIMEOUT, "Given up.")

    with pytest.raises(TransitionRefused):
        export_file.record_progress(export.id, attempt, rows_written=5, rows_total=10)
    assert _row(export).rows_written == 0


def test_a_stale_attempt_cannot_succeed_a_restarted_file(export):
    """After a restart, the earlier attempt's success is refused; the file stays running for the newer one."""
    stale = export_file.start(export.id)
    export_file.start(export.id)

    with pytest.raises(TransitionRefused):
        export_file.succeed(export.id, stale, size_bytes=10, row_count=1, retention_days=30)
    row = _row(export)
    assert (row.status, row.size_bytes, row.row_count) == (FileStatus.RUNNING, None, None)


def test_a_stale_attempt_cannot_fail_a_restarted_file(export):
    """After a restart, the earlier attempt's failure is refused."""
    stale = export_file.start(export.id)
    export_file.start(export.id)

    with pytest.raises(TransitionRefused):
        export_file.fail(export.id, stale, FailureCode.STORAGE_ERROR, "The stale attempt's upload was aborted.")
    row = _row(export)
    assert (row.status, row.failure_code) == (FileStatus.RUNNING, None)


def test_a_stale_attempt_cannot_record_progress(export):
    """After a restart, the earlier attempt's progress (its heartbeat) is refused, so it stops."""
    stale = export_file.start(export.id)
    current = export_file.start(export.id)
    export_file.record_progress(export.id, current, rows_written=3, rows_total=10)

    with pytest.raises(TransitionRefused):
        export_file.record_progress(export.id, stale, rows_written=9, rows_total=10)
    assert _row(export).rows_written == 3


def test_a_queued_file_cannot_be_failed_for_an_attempt_it_has_moved_past(export):
    """A pre-run check that saw no attempt cannot fail a file another delivery has started since."""
    export_file.start(export.id)

    with pytest.raises(TransitionRefused):
        export_file.fail(export.id, 0, FailureCode.ACCESS_LOST, "Seen before the start.")
    assert _row(export).status == FileStatus.RUNNING


def test_cancel_stops_a_running_file_whatever_its_attempt(export):
    export_file.start(export.id)
    export_file.start(export.id)

    export_file.cancel(export.id, export.requester_id, "Cancelled by its requester.")

    row = _row(export)
    assert (row.status, row.failure_code, row.cancelled_by_id) == (
        FileStatus.FAILED,
        FailureCode.CANCELLED,
        export.requester_id,
    )


def test_cancel_refuses_a_settled_file(export):
    attempt = export_file.start(export.id)
    export_file.succeed(export.id, attempt, size_bytes=10, row_count=1, retention_days=30)

    with pytest.raises(TransitionRefused):
        export_file.cancel(export.id, export.requester_id, "Too late.")
    assert _row(export).status == FileStatus.SUCCEEDED
