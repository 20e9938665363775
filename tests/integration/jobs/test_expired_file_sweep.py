"""The sweep removes the stored bytes of expired files only; rows keep their status."""

from __future__ import annotations

from datetime import timedelta

from app.domain.files import export_file
from app.models.export_file import FailureCode
from app.models.types import utcnow
from app.services.files.sweeps import sweep_expired_files
from tests.fixtures.workers import file_row


def _succeeded_file(scenario, storage, completed_days_ago: int):
    export = scenario.request_file("csv")
    completed = utcnow() - timedelta(days=completed_days_ago)
    attempt = export_file.start(export.id, now=completed)
    export_file.succeed(export.id, attempt, size_bytes=5, row_count=1, retention_days=30, now=completed)
    storage.put_bytes(export.storage_key, b"a,b\n")
    return export


def test_sweep_removes_bytes_of_expired_files_only(export_scenario, isolated_storage):
    """Bytes of a file past its expiry go; a file within its 30 days keeps its bytes; both stay succeeded."""
    expired = _succeeded_file(export_scenario, isolated_storage, completed_days_ago=31)
    live = _succeeded_file(export_scenario, isolated_storage, completed_days_ago=29)

    assert sweep_expired_files(utcnow()) == 1

    assert isolated_storage.list_keys("files/") == [live.storage_key]
    assert file_row(expired.id).status == "succeeded"
    assert file_row(live.id).status == "succeeded"


def test_second_sweep_finds_nothing_left_to_remove(export_scenario, isolated_storage):
    """A sweep after a sweep deletes nothing and raises nothing (idempotent)."""
    _succeeded_file(export_scenario, isolated_storage, completed_days_ago=40)
    assert sweep_expired_files(utcnow()) == 1

    assert sweep_expired_files(utcnow()) == 0


def test_sweep_removes_an_object_left_under_a_failed_files_key(export_scenario, isolated_storage):
    """A failed file must have no bytes: an object an overtaken attempt completed under its key goes too."""
    export = export_scenario.request_file("csv")
    export_file.fail(export.id, 0, FailureCode.TIMEOUT, "Given up.")
    isolated_storage.put_bytes(export.storage_key, b"late bytes")

    assert sweep_expired_files(utcnow()) == 1
    assert isolated_storage.list_keys("files/") == []


def test_sweep_leaves_bytes_of_files_still_in_production(export_scenario, isolated_storage):
    """An object under a running file's key (just completed, not yet recorded) is not touched."""
    export = export_scenario.request_file("csv")
    export_file.start(export.id)
    isolated_storage.put_bytes(export.storage_key, b"fresh bytes")

    assert sweep_expired_files(utcnow()) == 0
    assert isolated_storage.list_keys("files/") == [export.storage_key]
