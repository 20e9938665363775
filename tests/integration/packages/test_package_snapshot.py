"""The snapshot reader: COPY's CSV records equal the Python encoder's bytes, the driver's Arrow batches
hold the same rows in the declared types and see the snapshot, and SQLite works too."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import UTC, datetime
from decimal import Decimal

import pyarrow as pa

from app.data.package_snapshot import open_snapshot, packaged_datasets
from app.extensions import db
from app.models import ExportPackage
from app.rendering.package.encoders import CsvEncoder
from app.rendering.package.parquet_volumes import arrow_schema, database_batches
from app.rendering.package.volumes import encoded_batches, record_batches
from app.services.workspace_export.package_production import run_execution
from app.storage import get_storage
from tests import factories
from tests.integration.packages.package_reading import ALL_DATASETS, fill_every_dataset


def test_copy_records_equal_the_python_encoder_byte_for_byte(app_context):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    team = factories.make_team(workspace, created_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC))
    factories.make_team_member(team, hourly_rate=Decimal("0.01"), full_name="")
    with open_snapshot(workspace.id) as snapshot:
        assert snapshot.can_copy
        for dataset in packaged_datasets(ALL_DATASETS):
            encoder = CsvEncoder(dataset.column_names, dataset.column_types)
            by_copy = b"".join(batch.data() for batch in record_batches(snapshot.csv_record_batches(dataset, 7)))
            in_python = b"".join(batch.data() for batch in encoded_batches(encoder, snapshot.batches(dataset)))
            assert by_copy == in_python, dataset.name
            assert by_copy


def _driver_rows(snapshot, dataset) -> list[tuple]:
    schema = arrow_schema(dataset.column_shapes)
    table = pa.Table.from_batches(list(database_batches(snapshot.arrow_batches(dataset), schema)), schema)
    return [tuple(record.values()) for record in table.to_pylist()]


def test_arrow_batches_hold_the_typed_rows_in_the_declared_types(app_context):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    factories.make_team_member(factories.make_team(workspace), hourly_rate=Decimal("0.01"), full_name="")
    with open_snapshot(workspace.id) as snapshot:
        for dataset in packaged_datasets(ALL_DATASETS):
            typed = [tuple(row) for batch in snapshot.batches(dataset) for row in batch]
            assert _driver_rows(snapshot, dataset) == typed, dataset.name
            assert typed


def test_arrow_batches_read_the_snapshot_not_rows_committed_after_it(app_context):
    """The driver's own connection imports the snapshot: rows committed once it was taken are absent."""
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    dataset = packaged_datasets(["timesheet_entries"])[0]
    with open_snapshot(workspace.id) as snapshot:
        counted = snapshot.count(dataset)
        person = factories.make_team_member(factories.make_team(workspace))
        factories.make_timesheet_entry(person, note="committed after the snapshot")

        read = _driver_rows(snapshot, dataset)

    assert len(read) == counted
    assert "committed after the snapshot" not in {row[dataset.column_names.index("note")] for row in read}
    with open_snapshot(workspace.id) as later:
        assert len(_driver_rows(later, dataset)) == counted + 1


def test_a_package_is_produced_on_sqlite(sqlite_app, tmp_path, test_environment):
    """The embedded default: one read transaction instead of REPEATABLE READ, rows through csv.writer."""
    application = sqlite_app(storage_url=(tmp_path / "storage").as_uri())
    with application.app_context():
        db.create_all()
        workspace = factories.make_workspace()
        fill_every_dataset(workspace)
        execution = factories.make_execution(
            workspace, settings_snapshot=factories.settings_snapshot(datasets=ALL_DATASETS)
        )

        assert run_execution(execution.id) == "succeeded"

        package = db.session.query(ExportPackage).one()
        storage = get_storage()
        key = f"{package.prefix}timesheet_entries/timesheet_entries-00001.csv.zip"
        archive = zipfile.ZipFile(io.BytesIO(b"".join(storage.read_chunks(key))))
        records = list(csv.reader(io.StringIO(archive.read("timesheet_entries-00001.csv").decode(), newline="")))
        assert [record[9] for record in records[1:]] == factories.hostile_values()
        assert records[1][10] == "2026-11-02T18:00:00.000000+00:00"
        db.session.remove()
