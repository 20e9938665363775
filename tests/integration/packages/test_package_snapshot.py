"""The snapshot reader: COPY's CSV records equal the Python encoder's bytes, and SQLite works too."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import UTC, datetime
from decimal import Decimal

from app.data.package_snapshot import open_snapshot, packaged_datasets
from app.extensions import db
from app.models import ExportPackage
from app.rendering.package.encoders import CsvEncoder
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
            by_copy = b"".join(batch.data() for batch in record_batches(snapshot.csv_records(dataset)))
            in_python = b"".join(batch.data() for batch in encoded_batches(encoder, snapshot.batches(dataset)))
            assert by_copy == in_python, dataset.name
            assert by_copy


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
