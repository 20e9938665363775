"""What one run of the export job does with the file, run in this process: checks, redelivery, failures."""

from __future__ import annotations

from sqlalchemy import update

from app.domain.files import export_file
from app.extensions import db
from app.models import ExportFile, Membership
from app.services.files.export_runner import run_export_file
from tests.fixtures.workers import file_row, pending_uploads

SNAPSHOT_FIELDS = (
    "status",
    "started_at",
    "heartbeat_at",
    "completed_at",
    "expires_at",
    "size_bytes",
    "row_count",
    "rows_written",
    "attempt_count",
    "failure_code",
    "failure_detail",
)


def _snapshot(export_id: int) -> dict:
    row = file_row(export_id)
    return {field: getattr(row, field) for field in SNAPSHOT_FIELDS}


def _change_membership(scenario, **values) -> None:
    db.session.execute(update(Membership).where(Membership.id == scenario.membership.id).values(**values))
    db.session.commit()


def test_member_who_lost_the_dataset_grant_gets_access_lost(export_scenario, isolated_storage):
    """The grant is re-read when the job runs: without it the file goes queued → failed/access_lost, nothing stored."""
    export_scenario.add_timesheet_rows(5)
    export = export_scenario.request_file("csv")
    _change_membership(export_scenario, dataset_grants=["teams"])

    assert run_export_file(export.id) == "access_lost"

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code) == ("failed", "access_lost")
    assert "no longer has access to the dataset 'Timesheet entries'" in failed.failure_detail
    assert failed.started_at is None
    assert failed.attempt_count == 0
    assert isolated_storage.list_keys("files/") == []
    assert pending_uploads(isolated_storage) == []


def test_requester_no_longer_a_member_gets_access_lost(export_scenario, isolated_storage):
    """A requester removed from the workspace before the job ran: failed/access_lost without starting."""
    export = export_scenario.request_file("csv")
    db.session.delete(db.session.get(Membership, export_scenario.membership.id))
    db.session.commit()

    assert run_export_file(export.id) == "access_lost"

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code, failed.started_at) == ("failed", "access_lost", None)
    assert "no longer a member of this workspace" in failed.failure_detail


def test_dataset_gone_from_the_catalog_gets_source_missing(export_scenario, isolated_storage):
    """A file whose dataset the catalog no longer declares fails with source_missing before starting."""
    export = export_scenario.request_file("csv")
    db.session.execute(update(ExportFile).where(ExportFile.id == export.id).values(dataset="retired_dataset"))
    db.session.commit()

    assert run_export_file(export.id) == "source_missing"

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code, failed.started_at) == ("failed", "source_missing", None)
    assert "'retired_dataset'" in failed.failure_detail


def test_redelivered_settled_file_is_acknowledged_and_left_unchanged(export_scenario, isolated_storage):
    """Running the job again for a succeeded file changes neither the row nor the stored bytes."""
    export_scenario.add_timesheet_rows(10)
    export = export_scenario.request_file("csv")
    assert run_export_file(export.id) == "succeeded"
    before = _snapshot(export.id)
    stored_before = b"".join(isolated_storage.read_chunks(export.storage_key))

    assert run_export_file(export.id) == "already_settled"

    assert _snapshot(export.id) == before
    assert b"".join(isolated_storage.read_chunks(export.storage_key)) == stored_before
    assert isolated_storage.list_keys("files/") == [export.storage_key]


def test_redelivered_running_file_restarts_into_the_same_key(export_scenario, isolated_storage):
    """A file left running by a dead attempt is produced again from the start, into its fixed key."""
    export_scenario.add_timesheet_rows(10)
    export = export_scenario.request_file("csv")
    abandoned = isolated_storage.begin_upload(export.storage_key)
    abandoned.upload_part(b"half of an earlier attempt")
    export_file.start(export.id)

    assert run_export_file(export.id) == "succeeded"

    produced = file_row(export.id)
    assert (produced.status, produced.attempt_count, produced.row_count) == ("succeeded", 2, 10)
    assert isolated_storage.list_keys("files/") == [export.storage_key]
    assert pending_uploads(isolated_storage) == []


def test_a_stored_request_not_in_its_shape_fails_the_file_with_invalid_request(export_scenario, isolated_storage):
    """A damaged request column (a sort key stored as bare text) fails the file with a message saying
    what is wrong, not as an unexpected error, and stores nothing."""
    export = export_scenario.request_file("csv")
    damaged = {**export.request, "sort": ["id"]}
    db.session.execute(update(ExportFile).where(ExportFile.id == export.id).values(request=damaged))
    db.session.commit()

    assert run_export_file(export.id) == "invalid_request"

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code) == ("failed", "invalid_request")
    assert "The stored request cannot be read: sort[0] should be an object." in failed.failure_detail
    assert isolated_storage.list_keys("files/") == []
    assert pending_uploads(isolated_storage) == []
