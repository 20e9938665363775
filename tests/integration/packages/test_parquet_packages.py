"""A Parquet package: every value of every dataset reads back exactly with pyarrow, duckdb and
pandas, the extremes and NULLs included, with the column types the datasets declare."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import select, text

from app.domain.sources.catalog import DATASETS
from app.extensions import db
from app.models import ExportPackage
from app.services.workspace_export.package_production import run_execution
from app.storage import Storage, get_storage
from tests import factories
from tests.integration.packages.package_reading import ALL_DATASETS, fill_every_dataset, package_of

# Every column of the timesheet entries that may hold NULL once the table is loosened.
LOOSENED = ("person_name", "team_name", "work_date", "hours", "project", "approved", "note", "recorded_at")


def typed_rows(workspace_id: int, dataset: str) -> list[tuple]:
    """The dataset's rows of the workspace as Python values, in id order."""
    spec = DATASETS[dataset]
    rows = db.session.execute(
        select(*(spec.table.c[c.name] for c in spec.columns))
        .where(spec.table.c.workspace_id == workspace_id)
        .order_by(spec.table.c.id)
    ).all()
    db.session.rollback()
    return [tuple(row) for row in rows]


def _produce(workspace, datasets=ALL_DATASETS, **snapshot):
    execution = factories.make_execution(
        workspace,
        settings_snapshot=factories.settings_snapshot(datasets=datasets, format="parquet", **snapshot),
    )
    assert run_execution(execution.id) == "succeeded"
    return package_of(execution.id)


def _download(storage: Storage, package, folder: Path) -> dict:
    """The package's files under `folder` as the manifest names them; returns the manifest."""
    manifest = json.loads(b"".join(storage.read_chunks(package.manifest_key)))
    for dataset in manifest["datasets"]:
        for volume in dataset["volumes"]:
            path = folder / volume["key"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"".join(storage.read_chunks(package.prefix + volume["key"])))
    return manifest


def _duckdb_rows(pattern: Path) -> list[tuple]:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    table = connection.sql(f"SELECT * FROM read_parquet('{pattern}') ORDER BY id").to_arrow_table()
    return [tuple(record.values()) for record in table.to_pylist()]


def _pandas_rows(pattern: Path) -> list[tuple]:
    frame = pd.concat(
        [pd.read_parquet(path, dtype_backend="pyarrow") for path in sorted(pattern.parent.glob(pattern.name))]
    )
    return [tuple(_python(value) for value in row) for row in frame.itertuples(index=False)]


def _python(value):
    """A pandas cell as the Python value it holds (pandas gives its own missing value and Timestamp)."""
    if value is pd.NA or value is None:
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value


@pytest.fixture
def loosened_timesheets(app_context):
    """The timesheet table with its NOT NULL constraints lifted (restored, and the rows that need
    them gone, afterwards), so NULLs in every typed column can be packaged."""
    for column in LOOSENED:
        db.session.execute(text(f"ALTER TABLE data_timesheet_entries ALTER COLUMN {column} DROP NOT NULL"))
    db.session.commit()
    yield
    condition = " OR ".join(f"{column} IS NULL" for column in LOOSENED)
    db.session.execute(text(f"DELETE FROM data_timesheet_entries WHERE {condition}"))
    for column in LOOSENED:
        db.session.execute(text(f"ALTER TABLE data_timesheet_entries ALTER COLUMN {column} SET NOT NULL"))
    db.session.commit()


def _add_extremes_and_nulls(workspace) -> None:
    team = factories.make_team(workspace)
    person = factories.make_team_member(team)
    rows = [
        dict(
            hours=Decimal("999.99"),
            work_date=date(9999, 12, 31),
            recorded_at=datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            approved=True,
            note="NULL",
        ),
        dict(
            hours=Decimal("-999.99"),
            work_date=date(1, 1, 1),
            recorded_at=datetime(1, 1, 1, tzinfo=UTC),
            approved=False,
            note="",
        ),
        dict(
            hours=Decimal("0.01"),
            work_date=date(1970, 1, 1),
            recorded_at=datetime(1970, 1, 1, tzinfo=UTC),
            approved=True,
            note=" ",
        ),
    ]
    for values in rows:
        factories.make_timesheet_entry(person, **values)
    nulls = ", ".join(LOOSENED)
    db.session.execute(
        text(
            f"INSERT INTO data_timesheet_entries (workspace_id, team_id, person_id, {nulls})"
            f" VALUES (:workspace, :team, :person, {', '.join('NULL' for _ in LOOSENED)})"
        ),
        {"workspace": workspace.id, "team": team.id, "person": person.id},
    )
    db.session.commit()


def test_every_value_of_every_dataset_reads_back_exactly_in_pyarrow_duckdb_and_pandas(
    app_context, isolated_storage, loosened_timesheets, tmp_path
):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=300)
    _add_extremes_and_nulls(workspace)

    package = _produce(workspace)
    _download(isolated_storage, package, tmp_path)

    for dataset in ALL_DATASETS:
        expected = typed_rows(workspace.id, dataset)
        pattern = tmp_path / dataset / f"{dataset}-*.parquet"
        table = pa.concat_tables(pq.read_table(path) for path in sorted(pattern.parent.glob(pattern.name)))
        assert [tuple(record.values()) for record in table.to_pylist()] == expected, dataset
        assert _duckdb_rows(pattern) == expected, dataset
        assert _pandas_rows(pattern) == expected, dataset
    timesheets = typed_rows(workspace.id, "timesheet_entries")
    assert any(all(row[i] is None for i in (2, 4, 5, 6, 7, 8, 9, 10)) for row in timesheets)


def test_columns_have_the_declared_types(app_context, isolated_storage, tmp_path):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)

    package = _produce(workspace, datasets=["timesheet_entries", "time_off_requests"])
    manifest = _download(isolated_storage, package, tmp_path)

    schema = pq.read_schema(tmp_path / "timesheet_entries" / "timesheet_entries-00001.parquet")
    assert {field.name: str(field.type) for field in schema} == {
        "id": "int32",
        "person_id": "int32",
        "person_name": "string",
        "team_id": "int32",
        "team_name": "string",
        "work_date": "date32[day]",
        "hours": "decimal128(5, 2)",
        "project": "string",
        "approved": "bool",
        "note": "string",
        "recorded_at": "timestamp[us, tz=UTC]",
    }
    days = next(d for d in manifest["datasets"] if d["name"] == "time_off_requests")["parquet_schema"]
    assert next(c for c in days if c["name"] == "days") | {"nullable": True} == {
        "name": "days",
        "physical_type": "FIXED_LEN_BYTE_ARRAY",
        "logical_type": "Decimal(precision=5, scale=1)",
        "arrow_type": "decimal128(5, 1)",
        "nullable": True,
        "precision": 5,
        "scale": 1,
    }
    assert manifest["format"]["name"] == "parquet"


def test_duckdb_counts_a_volume_straight_from_its_file(app_context, isolated_storage, tmp_path):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=500)

    package = _produce(workspace, datasets=["timesheet_entries"])
    _download(isolated_storage, package, tmp_path)

    volume = tmp_path / "timesheet_entries" / "timesheet_entries-00001.parquet"
    assert duckdb.connect().execute(f"select count(*) from '{volume}'").fetchone() == (
        len(typed_rows(workspace.id, "timesheet_entries")),
    )


def test_a_small_volume_size_splits_parquet_volumes_under_the_cap(app_context, isolated_storage, tmp_path):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=6000)
    cap = 160 * 1024

    package = _produce(workspace, datasets=["timesheet_entries"], volume_size_bytes=cap)
    manifest = _download(isolated_storage, package, tmp_path)

    volumes = manifest["datasets"][0]["volumes"]
    assert len(volumes) > 1
    assert all(volume["size_bytes"] <= cap for volume in volumes)
    assert [v["key"] for v in volumes] == [
        f"timesheet_entries/timesheet_entries-{n:05d}.parquet" for n in range(1, len(volumes) + 1)
    ]
    read = pa.concat_tables(pq.read_table(io.BytesIO((tmp_path / v["key"]).read_bytes())) for v in volumes)
    assert [tuple(r.values()) for r in read.to_pylist()] == typed_rows(workspace.id, "timesheet_entries")


def _double_rows(workspace_id: int, dataset: str, times: int) -> None:
    """The dataset's rows of the workspace doubled `times` times (each copy with a new id)."""
    table = DATASETS[dataset].table
    columns = [column for column in table.c if column.name != "id"]
    copies = select(*columns).where(table.c.workspace_id == workspace_id)
    for _ in range(times):
        db.session.execute(table.insert().from_select([column.name for column in columns], copies))
    db.session.commit()


def test_datasets_written_ahead_beside_the_largest_are_stored_as_their_volumes_in_order(
    app_context, isolated_storage, tmp_path
):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace, timesheet_rows=6000)
    _double_rows(workspace.id, "shifts", times=8)
    # Shifts are the largest dataset now: the package writes them while its spool writes the timesheets.
    assert len(typed_rows(workspace.id, "shifts")) > len(typed_rows(workspace.id, "timesheet_entries"))
    cap = 160 * 1024

    package = _produce(workspace, datasets=["timesheet_entries", "shifts"], volume_size_bytes=cap)
    manifest = _download(isolated_storage, package, tmp_path)

    assert [dataset["name"] for dataset in manifest["datasets"]] == ["timesheet_entries", "shifts"]
    volumes = manifest["datasets"][0]["volumes"]
    assert len(volumes) > 1
    assert [v["key"] for v in volumes] == [
        f"timesheet_entries/timesheet_entries-{n:05d}.parquet" for n in range(1, len(volumes) + 1)
    ]
    for volume in volumes:
        data = (tmp_path / volume["key"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (volume["size_bytes"], volume["sha256"])
    read = pa.concat_tables(pq.read_table(io.BytesIO((tmp_path / v["key"]).read_bytes())) for v in volumes)
    assert [tuple(r.values()) for r in read.to_pylist()] == typed_rows(workspace.id, "timesheet_entries")


def test_a_parquet_package_is_produced_from_typed_rows_on_sqlite(sqlite_app, tmp_path, test_environment):
    """The embedded default has no COPY: rows are converted to Arrow columns from Python values."""
    application = sqlite_app(storage_url=(tmp_path / "storage").as_uri())
    with application.app_context():
        db.create_all()
        workspace = factories.make_workspace()
        fill_every_dataset(workspace)

        package = _produce(workspace)

        assert package == db.session.query(ExportPackage).one()
        _download(get_storage(), package, tmp_path / "package")
        for dataset in ALL_DATASETS:
            table = pq.read_table(tmp_path / "package" / dataset / f"{dataset}-00001.parquet")
            assert [tuple(record.values()) for record in table.to_pylist()] == typed_rows(workspace.id, dataset)
        db.session.remove()
