"""One dataset's rows into Parquet volumes: one Parquet file per volume, typed columns, zstd; the id
and time stamps delta-encoded, every other column dictionary-encoded.

Columns take their types from the dataset's declaration and its table (app/domain/workspace_export/column_shape.py):
integers at their width (int16, int32, int64), decimals as decimal128 with the declared precision
and scale, time stamps as microsecond timestamps adjusted to UTC, dates as dates, text as UTF-8
strings, booleans as booleans; every column may hold NULL. Values are converted by pyarrow, which
refuses anything it would have to round (a decimal with more digits than its scale).

Rows arrive as Arrow record batches: on PostgreSQL as its driver types them from a binary COPY
(`database_batches`, a decimal's text made decimal128 here), on SQLite from typed rows
(`row_batches`). Row groups are written as rows arrive, each of at most `row_group_rows` rows
(fewer where a volume or the dataset ends): at most one row group and one batch are held, so
memory stays flat however many rows the dataset has.

A Parquet file's size is known only once it is closed (its footer describes every row group), so
a volume is closed before a row group that might push it past the volume size: the row group's
size is estimated from its Arrow size plus an allowance per column, times the largest ratio of
written bytes to that seen so far in this dataset with a margin (twice it before any row group is
written); the footer is bounded by
the empty file's footer plus, per row group, each column's metadata and its min/max statistics
(at most twice its longest value). A row group too large for an empty volume is halved until it
fits. Should a volume still end past the cap, the writer raises rather than deliver it.
"""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Callable, Iterable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from app.domain.workspace_export.column_shape import ColumnShape
from app.rendering.package.parquet_settings import (
    COMPRESSION,
    COMPRESSION_LEVEL,
    DELTA_ENCODING,
    ROW_GROUP_ROWS,
    ROW_ORDER_COLUMN,
)
from app.rendering.package.volumes import (
    Progress,
    VolumeOverflow,
    VolumeResult,
    VolumeTarget,
    VolumeTooSmall,
    entry_name,
)
from app.vocabulary import PackageFormat

EXTENSION = PackageFormat.PARQUET
# Each column chunk's metadata in the footer, beside its name and statistics: offsets, sizes,
# encodings, counts (about 100 bytes in practice).
_CHUNK_METADATA_BYTES = 256
# A column chunk's bytes beyond its values (page headers, dictionary page headers, levels'
# framing), allowed for in each row group's estimate.
_CHUNK_OVERHEAD_BYTES = 4096
# The estimate of a row group's written size is the observed ratio times this.
_ESTIMATE_MARGIN = 1.5
_FIRST_RATIO = 2.0


def _memory_pool() -> pa.MemoryPool:
    """The pool the writer's converted batches and row groups live in: jemalloc where pyarrow is built
    with it, for the reason package jobs make it pyarrow's default (ARROW_DEFAULT_MEMORY_POOL,
    app/services/workspace_export/package_writing.py), and asked for by name because a process that
    imported pyarrow before that keeps mimalloc as its default; else pyarrow's default."""
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:
        return pa.default_memory_pool()


MEMORY_POOL = _memory_pool()


def arrow_type(column: ColumnShape) -> pa.DataType:
    if column.type == "integer":
        return {16: pa.int16(), 32: pa.int32(), 64: pa.int64()}[column.bits or 64]
    if column.type == "decimal":
        if column.precision is None or column.scale is None:
            raise ValueError(f"decimal column {column.name!r} needs its precision and scale")
        return pa.decimal128(column.precision, column.scale)
    if column.type == "datetime":
        return pa.timestamp("us", tz="UTC")
    if column.type == "date":
        return pa.date32()
    if column.type == "text":
        return pa.string()
    if column.type == "boolean":
        return pa.bool_()
    raise ValueError(f"unknown column type {column.type!r}")


def arrow_schema(columns: Sequence[ColumnShape]) -> pa.Schema:
    return pa.schema([pa.field(column.name, arrow_type(column), nullable=True) for column in columns])


def _encodings(schema: pa.Schema) -> dict:
    """The id (rows are written in its order) and time stamps (which mostly rise with it) are
    delta-encoded: nearly every value of a row group is new, so a dictionary would only cost. Every
    other column is dictionary-encoded, which the writer leaves for plain where the values are too
    many. At 1,500,000 timesheet rows the writer's CPU fell by a third (bench/README.md, session 31)."""
    rising = [
        field.name
        for field in schema
        if (field.name == ROW_ORDER_COLUMN and pa.types.is_integer(field.type)) or pa.types.is_timestamp(field.type)
    ]
    return {
        "use_dictionary": [field.name for field in schema if field.name not in rising],
        "column_encoding": dict.fromkeys(rising, DELTA_ENCODING) or None,
    }


def _writer(sink, schema: pa.Schema) -> pq.ParquetWriter:
    return pq.ParquetWriter(
        sink,
        schema,
        compression=COMPRESSION,
        compression_level=COMPRESSION_LEVEL,
        memory_pool=MEMORY_POOL,
        **_encodings(schema),
    )


def _empty_file(schema: pa.Schema) -> bytes:
    buffer = io.BytesIO()
    _writer(buffer, schema).close()
    return buffer.getvalue()


def schema_description(columns: Sequence[ColumnShape]) -> list[dict]:
    """The Parquet schema of the dataset's volumes as the manifest describes it, read from a file
    the writer makes (so the description is what the volumes hold)."""
    described = pq.ParquetFile(io.BytesIO(_empty_file(arrow_schema(columns)))).schema
    result = []
    for index, column in enumerate(columns):
        parquet = described.column(index)
        entry: dict = {
            "name": column.name,
            "physical_type": parquet.physical_type,
            "logical_type": str(parquet.logical_type),
            "arrow_type": str(arrow_type(column)),
            "nullable": True,
        }
        if column.type == "decimal":
            entry["precision"], entry["scale"] = column.precision, column.scale
        result.append(entry)
    return result


def row_batches(rows: Iterable[Sequence[Sequence]], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Batches of typed rows (tuples in column order) as Arrow record batches."""
    for batch in rows:
        if batch:
            columns = zip(*batch, strict=True)
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(values, type=field.type, memory_pool=MEMORY_POOL)
                    for values, field in zip(columns, schema, strict=True)
                ],
                schema=schema,
            )


def database_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Arrow batches as the database's driver types them (app/data/package_snapshot.py
    `arrow_batches`) in the types of `schema`: a decimal's exact text becomes decimal128 (refused
    if it would have to be rounded or does not fit), any other column that differs is cast exactly."""
    for batch in batches:
        columns = []
        for column, field in zip(batch.columns, schema, strict=True):
            if column.type != field.type:
                column = pc.cast(column, field.type, safe=True, memory_pool=MEMORY_POOL)
            columns.append(column)
        yield pa.RecordBatch.from_arrays(columns, schema=schema)


class _Sink:
    """Where pyarrow writes a volume: counted, hashed and passed on to the volume's target."""

    closed = False
    # Set when the writing fails: pyarrow's writer, left open, writes its footer when it is
    # collected, and the volume's target (an upload, a spool's file) may be gone by then.
    abandoned = False

    def __init__(self, target: VolumeTarget):
        self.target = target
        self.size = 0
        self.sha256 = hashlib.sha256()

    def write(self, data) -> int:
        view = memoryview(data)
        if self.abandoned:
            return view.nbytes
        self.sha256.update(view)
        self.target.write(bytes(view))
        self.size += view.nbytes
        return view.nbytes

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def abandon(self) -> None:
        self.abandoned = True


class _Volume:
    def __init__(self, target: VolumeTarget, dataset: str, sequence: int, schema: pa.Schema):
        self.dataset = dataset
        self.sequence = sequence
        self.sink = _Sink(target)
        self.writer = _writer(self.sink, schema)
        self.rows = 0
        self.row_groups = 0
        self.footer_bytes = 0  # the bound of what row groups written so far add to the footer

    def finish(self, volume_size_bytes: int) -> VolumeResult:
        self.writer.close()
        if self.sink.size > volume_size_bytes:
            raise VolumeOverflow(
                f"Parquet volume {self.sequence} of {self.dataset!r} is {self.sink.size} bytes, "
                f"over its cap of {volume_size_bytes}"
            )
        result = VolumeResult(
            self.dataset,
            self.sequence,
            entry_name(self.dataset, self.sequence, EXTENSION),
            self.rows,
            self.sink.size,
            self.sink.sha256.hexdigest(),
        )
        self.sink.target.close(result)
        return result


def _footer_bytes(table: pa.Table) -> int:
    """The most a row group of `table` adds to the footer: each column chunk's metadata and its
    min/max statistics."""
    total = 0
    for name, column in zip(table.column_names, table.columns, strict=True):
        longest = 16
        if pa.types.is_string(column.type) and len(column) and column.null_count < len(column):
            lengths = pc.binary_length(column, memory_pool=MEMORY_POOL)
            longest = max(longest, pc.max(lengths, memory_pool=MEMORY_POOL).as_py() or 0)
        total += _CHUNK_METADATA_BYTES + len(name.encode("utf-8")) + 2 * longest
    return total


def write_parquet_volumes(
    *,
    dataset: str,
    columns: Sequence[ColumnShape],
    batches: Iterable[pa.RecordBatch],
    volume_size_bytes: int,
    open_volume: Callable[[int], VolumeTarget],
    progress: Progress | None = None,
    row_group_rows: int = ROW_GROUP_ROWS,
) -> list[VolumeResult]:
    """Write every row of `batches` (of `arrow_schema(columns)`) into Parquet volumes 1, 2, … of
    `dataset`; a dataset without rows still gets one volume (its schema only)."""
    schema = arrow_schema(columns)
    empty_file_bytes = len(_empty_file(schema))
    chunk_overhead = _CHUNK_OVERHEAD_BYTES * len(columns)
    if empty_file_bytes > volume_size_bytes:
        raise VolumeTooSmall(
            f"A volume of {volume_size_bytes} bytes cannot hold even the schema of dataset {dataset!r}."
        )
    done: list[VolumeResult] = []
    closed_bytes = 0
    rows_written = 0
    # The most written bytes of a row group so far per byte of its basis: its Arrow size plus the
    # allowance for its columns' fixed overhead (so a small row group's headers do not inflate it).
    observed_ratio: float | None = None
    volume = _Volume(open_volume(1), dataset, 1, schema)

    def basis(table: pa.Table) -> int:
        return table.nbytes + chunk_overhead

    def estimate(table: pa.Table) -> int:
        factor = _FIRST_RATIO if observed_ratio is None else observed_ratio * _ESTIMATE_MARGIN
        return math.ceil(basis(table) * factor)

    def fits(table: pa.Table, footer: int) -> bool:
        projected = volume.sink.size + estimate(table) + empty_file_bytes + volume.footer_bytes + footer
        return projected <= volume_size_bytes

    def write(table: pa.Table) -> None:
        nonlocal volume, closed_bytes, rows_written, observed_ratio
        footer = _footer_bytes(table)
        if not fits(table, footer) and volume.row_groups:
            done.append(volume.finish(volume_size_bytes))
            closed_bytes += done[-1].size_bytes
            volume = _Volume(open_volume(volume.sequence + 1), dataset, volume.sequence + 1, schema)
        if not fits(table, footer):
            if table.num_rows == 1:
                raise VolumeTooSmall(
                    f"A row of dataset {dataset!r} ({table.nbytes} bytes in memory) does not fit in a volume of "
                    f"{volume_size_bytes} bytes."
                )
            half = table.num_rows // 2
            write(table.slice(0, half))
            write(table.slice(half))
            return
        before = volume.sink.size
        volume.writer.write_table(table, row_group_size=table.num_rows)
        ratio = (volume.sink.size - before) / basis(table)
        observed_ratio = ratio if observed_ratio is None else max(observed_ratio, ratio)
        volume.rows += table.num_rows
        volume.row_groups += 1
        volume.footer_bytes += footer
        rows_written += table.num_rows
        if progress is not None:
            progress(rows_written, closed_bytes + volume.sink.size)

    pending = pa.Table.from_batches([], schema)  # not schema.empty_table(): that loads pandas
    try:
        for batch in batches:
            pending = pa.concat_tables([pending, pa.Table.from_batches([batch], schema)], memory_pool=MEMORY_POOL)
            while pending.num_rows >= row_group_rows:
                write(pending.slice(0, row_group_rows))
                pending = pending.slice(row_group_rows)
        if pending.num_rows:
            write(pending)
    except BaseException:
        volume.sink.abandon()
        raise
    done.append(volume.finish(volume_size_bytes))
    if progress is not None:
        progress(rows_written, closed_bytes + done[-1].size_bytes)
    return done
