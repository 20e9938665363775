"""Parquet volumes: typed columns that read back exactly, zstd row groups of a bounded size written
as rows arrive, volumes under the cap with true checksums."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.domain.workspace_export.column_shape import ColumnShape
from app.rendering.package.parquet_volumes import (
    MEMORY_POOL,
    arrow_schema,
    database_batches,
    row_batches,
    schema_description,
    write_parquet_volumes,
)
from app.rendering.package.volumes import VolumeResult, VolumeTooSmall
from tests import factories

COLUMNS = [
    ColumnShape("id", "integer", bits=32),
    ColumnShape("big", "integer", bits=64),
    ColumnShape("small", "integer", bits=16),
    ColumnShape("amount", "decimal", precision=10, scale=2),
    ColumnShape("at", "datetime"),
    ColumnShape("day", "date"),
    ColumnShape("note", "text"),
    ColumnShape("ok", "boolean"),
]
SCHEMA = arrow_schema(COLUMNS)


class _Target:
    def __init__(self, store: dict[int, tuple[bytes, VolumeResult]], sequence: int):
        self._store, self._sequence, self._buffer = store, sequence, io.BytesIO()

    def write(self, data: bytes) -> None:
        self._buffer.write(data)

    def close(self, volume: VolumeResult) -> None:
        self._store[self._sequence] = (self._buffer.getvalue(), volume)


def _rows(count: int = 0) -> list[tuple]:
    """The extremes and NULLs first, then every hostile value, then `count` ordinary rows."""
    rows = [
        (
            -(2**31),
            -(2**63),
            -(2**15),
            Decimal("-99999999.99"),
            datetime(1, 1, 1, tzinfo=UTC),
            date(1, 1, 1),
            "",
            False,
        ),
        (
            2**31 - 1,
            2**63 - 1,
            2**15 - 1,
            Decimal("99999999.99"),
            datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            date(9999, 12, 31),
            "NULL",
            True,
        ),
        (3, None, None, None, None, None, None, None),
        (4, 0, 0, Decimal("0.01"), datetime(1970, 1, 1, tzinfo=UTC), date(1970, 1, 1), " ", True),
    ]
    rows += [
        (10 + i, i, i % 100, Decimal(i) / 4, datetime(2026, 11, 2, 18, tzinfo=UTC), date(2026, 1, 1), value, i % 2 == 0)
        for i, value in enumerate(factories.hostile_values())
    ]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows += [
        (
            1000 + i,
            i * 7919,
            i % 300,
            Decimal(i % 4000) / 4,
            start + timedelta(seconds=i),
            date(2026, 1, 1) + timedelta(days=i % 365),
            f"note {i * 7919 % 100003}",
            i % 3 == 0,
        )
        for i in range(count)
    ]
    return rows


def _write(rows, cap: int = 64 * 1024 * 1024, batch: int = 500, row_group_rows: int = 1000, progress=None):
    store: dict[int, tuple[bytes, VolumeResult]] = {}
    volumes = write_parquet_volumes(
        dataset="entries",
        columns=COLUMNS,
        batches=row_batches([rows[i : i + batch] for i in range(0, len(rows), batch)], SCHEMA),
        volume_size_bytes=cap,
        open_volume=lambda sequence: _Target(store, sequence),
        progress=progress,
        row_group_rows=row_group_rows,
    )
    return volumes, [store[v.sequence][0] for v in volumes]


def _read_rows(files: list[bytes]) -> list[tuple]:
    rows = []
    for data in files:
        table = pq.read_table(io.BytesIO(data))
        rows += [tuple(record.values()) for record in table.to_pylist()]
    return rows


def test_every_value_reads_back_exactly_with_its_type():
    rows = _rows()
    _, files = _write(rows)
    assert _read_rows(files) == rows
    assert pq.read_schema(io.BytesIO(files[0])) == SCHEMA


def test_columns_carry_the_declared_widths_precision_and_utc_microseconds():
    assert [str(field.type) for field in SCHEMA] == [
        "int32",
        "int64",
        "int16",
        "decimal128(10, 2)",
        "timestamp[us, tz=UTC]",
        "date32[day]",
        "string",
        "bool",
    ]
    described = {column["name"]: column for column in schema_description(COLUMNS)}
    assert described["amount"]["logical_type"] == "Decimal(precision=10, scale=2)"
    assert "isAdjustedToUTC=true, timeUnit=microseconds" in described["at"]["logical_type"]
    assert described["day"]["logical_type"] == "Date"
    assert described["note"]["logical_type"] == "String"


def test_a_value_that_would_be_rounded_is_refused():
    row = (1, 1, 1, Decimal("0.001"), None, None, None, None)
    with pytest.raises(pa.ArrowInvalid):
        _write([row])


def _as_the_driver_types_them(rows: list[tuple]) -> pa.RecordBatch:
    """`rows` as the database's driver hands them over (app/data/package_snapshot.py
    `arrow_batches`): every column typed, a decimal as its exact text."""
    columns = list(zip(*rows, strict=True))
    arrays = [
        pa.array([None if value is None else format(value, "f") for value in values], pa.string())
        if field.name == "amount"
        else pa.array(values, field.type)
        for values, field in zip(columns, SCHEMA, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, names=SCHEMA.names)


def test_batches_as_the_driver_types_them_hold_the_same_values_in_the_declared_types():
    rows = _rows(count=50)

    converted = list(database_batches([_as_the_driver_types_them(rows)], SCHEMA))

    assert all(batch.schema == SCHEMA for batch in converted)
    assert [tuple(record.values()) for record in pa.Table.from_batches(converted).to_pylist()] == rows


def test_a_decimal_text_that_would_be_rounded_is_refused():
    batch = _as_the_driver_types_them([(1, 1, 1, Decimal("0.00"), None, None, None, None)])
    batch = batch.set_column(3, "amount", pa.array(["0.001"]))

    with pytest.raises(pa.ArrowInvalid):
        list(database_batches([batch], SCHEMA))


def test_converted_columns_are_held_in_the_writers_pool_jemalloc_where_pyarrow_has_it():
    if "jemalloc" in pa.supported_memory_backends():
        assert MEMORY_POOL.backend_name == "jemalloc"
    batch = _as_the_driver_types_them(_rows(count=5000))
    default_before, pool_before = pa.default_memory_pool().bytes_allocated(), MEMORY_POOL.bytes_allocated()

    converted = list(database_batches([batch], SCHEMA))

    assert MEMORY_POOL.bytes_allocated() - pool_before >= converted[0].column(3).nbytes
    if MEMORY_POOL.backend_name != pa.default_memory_pool().backend_name:
        assert pa.default_memory_pool().bytes_allocated() == default_before


def test_a_package_job_gets_jemalloc_as_pyarrows_default_pool():
    """What the Parquet writer allocates from the default pool whatever pool it is given stays out
    of mimalloc's huge pages in a worker's package job, the first in its process to import pyarrow."""
    # The pinned pyarrow's wheels carry jemalloc; one without it would quietly keep mimalloc.
    assert "jemalloc" in pa.supported_memory_backends()
    environment = {name: value for name, value in os.environ.items() if name != "ARROW_DEFAULT_MEMORY_POOL"}
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import app.services.workspace_export.package_writing, app.rendering.package.parquet_volumes;"
            " import pyarrow as pa; print(pa.default_memory_pool().backend_name)",
        ],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == "jemalloc"


def test_row_groups_hold_at_most_the_bound_and_are_zstd_compressed():
    _, files = _write(_rows(count=5000), row_group_rows=1000)
    metadata = pq.ParquetFile(io.BytesIO(files[0])).metadata
    sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    assert max(sizes) == 1000 and sum(sizes) == len(_rows(count=5000))
    assert {metadata.row_group(0).column(i).compression for i in range(len(COLUMNS))} == {"ZSTD"}


def test_the_id_and_time_stamps_are_delta_encoded_and_every_other_column_dictionary_encoded():
    _, files = _write(_rows(count=5000), row_group_rows=1000)
    row_group = pq.ParquetFile(io.BytesIO(files[0])).metadata.row_group(1)
    encodings = {column.name: set(row_group.column(i).encodings) for i, column in enumerate(COLUMNS)}
    for name in ("id", "at"):
        assert "DELTA_BINARY_PACKED" in encodings[name] and "RLE_DICTIONARY" not in encodings[name]
    for name in ("big", "small", "amount", "day", "note"):
        assert "RLE_DICTIONARY" in encodings[name], name


def _write_into(targets: list[_Target], store: dict, batches) -> None:
    """Batches of rows written in row groups of 1,000, each volume's target kept in `targets`."""

    def open_volume(sequence):
        targets.append(_Target(store, sequence))
        return targets[-1]

    write_parquet_volumes(
        dataset="entries",
        columns=COLUMNS,
        batches=row_batches(batches, SCHEMA),
        volume_size_bytes=64 * 1024 * 1024,
        open_volume=open_volume,
        row_group_rows=1000,
    )


def test_a_volume_whose_writing_failed_gets_no_more_bytes():
    """pyarrow's writer, left open by the failure, writes its footer when it is collected."""
    rows = _rows(count=3000)

    def failing_batches():
        yield rows[:2000]
        raise RuntimeError("the rows stopped")

    targets: list[_Target] = []
    with contextlib.suppress(RuntimeError):
        _write_into(targets, {}, failing_batches())
    written = len(targets[0]._buffer.getvalue())
    gc.collect()

    assert written > 0
    assert len(targets[0]._buffer.getvalue()) == written


def test_row_groups_are_written_while_rows_still_arrive():
    store: dict[int, tuple[bytes, VolumeResult]] = {}
    targets: list[_Target] = []
    seen_before_last_batch = []
    rows = _rows(count=5000)

    def batches():
        for i in range(0, len(rows), 500):
            yield rows[i : i + 500]
        seen_before_last_batch.append(sum(len(t._buffer.getvalue()) for t in targets))

    _write_into(targets, store, batches())
    whole = len(store[1][0])
    assert seen_before_last_batch[0] > whole * 3 // 4  # four of five row groups were out before the end


def test_a_small_cap_splits_the_dataset_into_volumes_under_it_in_row_order():
    rows = _rows(count=20_000)
    cap = 96 * 1024
    volumes, files = _write(rows, cap=cap, row_group_rows=2000)
    assert len(volumes) > 3
    assert all(len(data) <= cap for data in files)
    assert [v.sequence for v in volumes] == list(range(1, len(volumes) + 1))
    assert [v.entry_name for v in volumes][:2] == ["entries-00001.parquet", "entries-00002.parquet"]
    assert _read_rows(files) == rows
    for volume, data in zip(volumes, files, strict=True):
        assert (volume.size_bytes, volume.sha256) == (len(data), hashlib.sha256(data).hexdigest())
        assert volume.row_count == pq.ParquetFile(io.BytesIO(data)).metadata.num_rows


def test_progress_counts_rows_and_bytes_to_the_end():
    seen = []
    volumes, _ = _write(_rows(count=3000), progress=lambda rows, size: seen.append((rows, size)))
    assert seen[-1] == (len(_rows(count=3000)), sum(v.size_bytes for v in volumes))


def test_a_dataset_without_rows_is_one_volume_with_its_schema():
    volumes, files = _write([])
    assert [v.row_count for v in volumes] == [0]
    assert pq.read_table(io.BytesIO(files[0])).schema == SCHEMA


def test_a_cap_smaller_than_one_row_is_refused():
    with pytest.raises(VolumeTooSmall):
        _write(_rows(), cap=2000)
