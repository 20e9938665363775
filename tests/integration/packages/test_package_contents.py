"""What a produced package holds: every row of the workspace as of the cutoff, exactly, and nothing else.

These run the production service in the test's process (the job does nothing more than call it);
tests/integration/packages/test_package_worker.py runs it through real workers.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import select

from app.extensions import db
from app.models import ExportExecution, ExportVolume
from app.services.workspace_export.package_production import run_execution
from app.storage import StorageError
from tests import factories
from tests.fixtures.workers import pending_uploads
from tests.integration.packages.package_reading import (
    ALL_DATASETS,
    database_rows,
    fill_every_dataset,
    package_of,
    read_package,
)


def _execution(workspace, **snapshot):
    return factories.make_execution(
        workspace, settings_snapshot=factories.settings_snapshot(datasets=ALL_DATASETS, **snapshot)
    )


def test_a_csv_package_holds_every_row_of_every_dataset_exactly(app_context, isolated_storage):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=300)
    execution = _execution(workspace)

    assert run_execution(execution.id) == "succeeded"

    package = package_of(execution.id)
    read = read_package(isolated_storage, package)
    for dataset in ALL_DATASETS:
        assert read.csv_rows(dataset) == database_rows(workspace.id, dataset), dataset
        assert read.dataset(dataset)["row_count"] == len(database_rows(workspace.id, dataset))
    assert package.row_count == read.manifest["totals"]["rows"]
    assert package.volumes_count == read.manifest["totals"]["volumes"] == len(ALL_DATASETS)


def test_a_small_volume_size_splits_a_dataset_into_volumes_under_the_cap(app_context, isolated_storage):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=3000)
    cap = 24 * 1024
    execution = _execution(workspace, volume_size_bytes=cap)

    assert run_execution(execution.id) == "succeeded"

    package = package_of(execution.id)
    read = read_package(isolated_storage, package)
    timesheet = read.dataset("timesheet_entries")["volumes"]
    assert len(timesheet) > 3
    assert all(volume["size_bytes"] <= cap for d in read.manifest["datasets"] for volume in d["volumes"])
    assert [v["key"] for v in timesheet] == [
        f"timesheet_entries/timesheet_entries-{n:05d}.csv.zip" for n in range(1, len(timesheet) + 1)
    ]
    assert read.csv_rows("timesheet_entries") == database_rows(workspace.id, "timesheet_entries")
    stored = sorted(isolated_storage.list_keys(package.prefix))
    assert stored == sorted(
        [package.manifest_key, package.prefix + "SHA256SUMS"]
        + [package.prefix + v["key"] for d in read.manifest["datasets"] for v in d["volumes"]]
    )
    assert pending_uploads(isolated_storage) == []


def test_json_lines_keep_numbers_booleans_and_time_stamps_typed(app_context, isolated_storage):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    execution = _execution(workspace, format="jsonl")

    assert run_execution(execution.id) == "succeeded"

    read = read_package(isolated_storage, package_of(execution.id))
    people = read.json_rows("people")
    assert people[0]["hourly_rate"] == Decimal("21.50")
    assert isinstance(people[0]["id"], int) and people[0]["active"] is True
    entries = read.json_rows("timesheet_entries")
    assert {type(entry["hours"]) for entry in entries} == {Decimal}
    assert {type(entry["approved"]) for entry in entries} == {bool}
    assert entries[0]["recorded_at"] == "2026-11-02T18:00:00.000000+00:00"
    assert entries[0]["work_date"] == "2026-01-01"
    assert [entry["note"] for entry in entries] == factories.hostile_values()
    assert read.manifest["format"]["name"] == "jsonl"


def test_a_package_holds_no_other_workspace_rows(app_context, isolated_storage):
    workspace, other = factories.make_workspace(), factories.make_workspace()
    fill_every_dataset(workspace)
    fill_every_dataset(other, timesheet_rows=100)
    execution = _execution(workspace)

    assert run_execution(execution.id) == "succeeded"

    read = read_package(isolated_storage, package_of(execution.id))
    for dataset in ALL_DATASETS:
        ours = {row[0] for row in database_rows(workspace.id, dataset)}
        assert {row[0] for row in read.csv_rows(dataset)} == ours, dataset


def test_a_dataset_that_is_not_covered_fails_the_execution_with_a_clear_message(app_context, isolated_storage):
    workspace = factories.make_workspace()
    execution = factories.make_execution(
        workspace, settings_snapshot=factories.settings_snapshot(datasets=["teams", "audit_events"])
    )

    assert run_execution(execution.id) == "dataset_not_covered"

    failed = db.session.get(ExportExecution, execution.id, populate_existing=True)
    assert failed.status == "failed" and failed.failure_code == "dataset_not_covered"
    assert "'audit_events'" in failed.failure_detail and "SELECT" not in failed.failure_detail
    assert package_of(execution.id) is None
    assert isolated_storage.list_keys("packages/") == []


def test_volumes_and_parts_are_recorded_complete_with_their_checksums(app_context, isolated_storage):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=2000)
    execution = _execution(workspace)

    assert run_execution(execution.id) == "succeeded"

    read = read_package(isolated_storage, package_of(execution.id))
    volumes = db.session.query(ExportVolume).filter_by(execution_id=execution.id).all()
    by_key = {volume.key: volume for volume in volumes}
    package = package_of(execution.id)
    for dataset in read.manifest["datasets"]:
        for entry in dataset["volumes"]:
            volume = by_key[package.prefix + entry["key"]]
            assert (volume.status, volume.size_bytes, volume.sha256, volume.row_count) == (
                "complete",
                entry["size_bytes"],
                entry["sha256"],
                entry["row_count"],
            )
            assert sum(part.size_bytes for part in volume.parts) == volume.size_bytes
            assert volume.upload_id


def test_storage_refusing_a_volume_mid_dataset_fails_with_storage_error_and_leaves_nothing(
    app_context, isolated_storage, monkeypatch
):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=3000)
    execution = _execution(workspace, volume_size_bytes=24 * 1024)
    begin_upload = isolated_storage.begin_upload
    opened = []

    def refuse_the_eighth(key: str):
        opened.append(key)
        if len(opened) == 8:
            raise StorageError(f"disk full while writing {key}")
        return begin_upload(key)

    monkeypatch.setattr(isolated_storage, "begin_upload", refuse_the_eighth)

    assert run_execution(execution.id) == "storage_error"

    failed = db.session.get(ExportExecution, execution.id, populate_existing=True)
    assert failed.failure_code == "storage_error"
    assert "disk full" not in failed.failure_detail and "packages/" not in failed.failure_detail
    assert f"workspace export {execution.id}" in failed.failure_detail
    assert "timesheet_entries-0000" in opened[-1]
    assert isolated_storage.list_keys("packages/") == []
    assert pending_uploads(isolated_storage) == []
    assert {v.status for v in db.session.scalars(select(ExportVolume))} == {"discarded"}
