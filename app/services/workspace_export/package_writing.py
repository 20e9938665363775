"""The writing phase of producing a workspace-export package: each dataset of the snapshot streamed
into volumes no larger than the volume size (zipped CSV or JSON Lines, or Parquet files:
app/rendering/package), each volume uploaded through a multipart upload as it is written.

A volume is recorded (app/domain/workspace_export/export_volume.py) before its upload opens and completed with its
size, row count and SHA-256; every part is recorded too. Progress is recorded at most every
PROGRESS_INTERVAL. pyarrow is imported only to write a Parquet package: it costs every process
that loads it about 50 MB.

A Parquet package on PostgreSQL with several datasets writes its largest dataset while a spool
writes the others ahead into temporary files from a second connection in the same snapshot
(app/services/workspace_export/parquet_spool.py); their volumes are then uploaded and recorded
here, in the package's thread, exactly as the volumes it writes itself. The manifest lists the
datasets in their declared order whatever order they were written in.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
from collections.abc import Callable, Generator, Iterable

from app.config import library_default
from app.data.package_snapshot import PackagedDataset, PackageSnapshot
from app.data.read_ahead import read_ahead
from app.domain.workspace_export import export_execution, export_volume
from app.models.export_execution import ExecutionPhase
from app.rendering.package.encoders import encoder_for
from app.rendering.package.manifest import ManifestDataset, ManifestVolume
from app.rendering.package.volumes import (
    RECORDS_PER_BATCH,
    Progress,
    VolumeResult,
    VolumeTarget,
    encoded_batches,
    record_batches,
    write_dataset_volumes,
)
from app.services.workspace_export.package_keys import relative_to_package, volume_key
from app.services.workspace_export.parquet_spool import ParquetSpool, SpooledDataset, until_stopped
from app.services.workspace_export.production_attempt import ProductionAttempt
from app.storage import PartBuffer, StorageError
from app.vocabulary import PackageFormat

# pyarrow picks the pool behind `pa.default_memory_pool()` from this variable once, as it is first
# imported (in a worker, by a Parquet package's job, after this module), and the Parquet writer
# allocates from that pool whatever pool it is given (its dictionary encoders, its page buffers).
# Its choice on Linux, mimalloc, asks for transparent huge pages, so its arena stays resident by
# 2 MiB ranges: 27 MB of pages for at most 8 MB of Arrow data at the peak of a 5,000,000-row
# package, 11 MB more than with jemalloc (bench/README.md, "After issue 31").
library_default("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
# Parquet: the driver's batches read ahead of the writer, which writes a row group (about four
# batches) at once: at 5,000,000 rows three ahead took 5.84-6.15 s against 5.97-6.40 s for one,
# peaks 207.5-211.3 MB against 202.2-213.1 MB (six interleaved pairs).
READ_AHEAD_BATCHES = 3


def write_datasets(
    attempt: ProductionAttempt, snapshot: PackageSnapshot, datasets: list[PackagedDataset], expected: dict[str, int]
) -> list[ManifestDataset]:
    """Write every dataset's volumes; return what the manifest says of each dataset, in order."""
    attempt.phase = ExecutionPhase.WRITING
    with attempt.fenced():
        export_execution.enter_phase(attempt.execution_id, attempt.number, ExecutionPhase.WRITING)
    written: dict[str, ManifestDataset] = {}
    if attempt.format == PackageFormat.PARQUET and snapshot.can_copy and len(datasets) > 1:
        _write_parquet_beside_a_spool(attempt, snapshot, datasets, expected, written)
    else:
        for dataset in datasets:
            _write_dataset(attempt, snapshot, dataset, expected, written)
    attempt.record_progress(force=True)
    counts = attempt.counts
    with attempt.fenced():
        export_execution.finish_phase(
            attempt.execution_id,
            attempt.number,
            ExecutionPhase.WRITING,
            f"Wrote {counts.rows} rows in {counts.volumes} volumes ({counts.bytes} bytes).",
            details={"rows": counts.rows, "bytes": counts.bytes, "volumes": counts.volumes},
        )
    return [written[dataset.name] for dataset in datasets]


def _write_parquet_beside_a_spool(
    attempt: ProductionAttempt,
    snapshot: PackageSnapshot,
    datasets: list[PackagedDataset],
    expected: dict[str, int],
    written: dict[str, ManifestDataset],
) -> None:
    """The largest dataset written directly while a spool writes the others ahead
    (app/services/workspace_export/parquet_spool.py); then each of those uploaded from the spool,
    or written directly where the spool had not taken it up."""
    lead = max(datasets, key=lambda dataset: expected[dataset.name])
    others = [dataset for dataset in datasets if dataset is not lead]
    # Made here, before the spool's thread starts: the first exports the snapshot on its connection,
    # which only this thread uses. Each connects once the spool's thread reads it.
    sources = {dataset.name: snapshot.arrow_batches(dataset) for dataset in others}

    def spool_dataset(dataset: PackagedDataset, open_volume, keep_going) -> list[VolumeResult]:
        from app.rendering.package.parquet_volumes import arrow_schema, database_batches

        source = sources[dataset.name]
        batches = database_batches(until_stopped(source, keep_going), arrow_schema(dataset.column_shapes))
        return _parquet_volumes(attempt, dataset, source, batches, open_volume, progress=None)

    try:
        with ParquetSpool(others, spool_dataset) as spool:
            _write_dataset(attempt, snapshot, lead, expected, written)
            spool.lead_finished()
            for dataset in others:
                _write_dataset(attempt, snapshot, dataset, expected, written, spool.take(dataset))
    finally:
        for source in sources.values():
            source.close()


def _write_dataset(
    attempt: ProductionAttempt,
    snapshot: PackageSnapshot,
    dataset: PackagedDataset,
    expected: dict[str, int],
    written: dict[str, ManifestDataset],
    spooled: SpooledDataset | None = None,
) -> None:
    rows_before, bytes_before = attempt.counts.rows, attempt.counts.bytes

    def progress(rows: int, size: int) -> None:
        attempt.counts.rows, attempt.counts.bytes = rows_before + rows, bytes_before + size
        attempt.record_progress()

    parquet_schema = None
    if spooled is not None:
        volumes = _upload_spooled(attempt, dataset, spooled, progress)
    elif attempt.format == PackageFormat.PARQUET:
        volumes = _write_parquet(attempt, snapshot, dataset, progress)
    else:
        volumes = _write_zipped(attempt, snapshot, dataset, progress)
    if attempt.format == PackageFormat.PARQUET:
        from app.rendering.package.parquet_volumes import schema_description

        parquet_schema = schema_description(dataset.column_shapes)
    written[dataset.name] = ManifestDataset(
        name=dataset.name,
        schema_version=dataset.declaration.schema_version,
        content_hash=dataset.declaration.content_hash,
        columns=dataset.declaration.columns,
        volumes=[_manifest_volume(attempt, volume) for volume in volumes],
        parquet_schema=parquet_schema,
    )
    if written[dataset.name].row_count != expected[dataset.name]:
        # The snapshot cannot change under us; a difference is a bug, not a race.
        raise RuntimeError(
            f"dataset {dataset.name}: counted {expected[dataset.name]} rows, wrote {written[dataset.name].row_count}"
        )


def _write_zipped(
    attempt: ProductionAttempt, snapshot: PackageSnapshot, dataset: PackagedDataset, progress: Progress
) -> list[VolumeResult]:
    encoder = encoder_for(attempt.format, dataset.column_names, dataset.column_types)
    source: Generator
    if attempt.format == PackageFormat.CSV and snapshot.can_copy:
        source = snapshot.csv_record_batches(dataset, RECORDS_PER_BATCH)
        batches = record_batches(source)
    else:
        source = snapshot.batches(dataset)
        batches = encoded_batches(encoder, source)
    # Closed however the writing ends, so a failure mid-COPY ends the COPY before the
    # snapshot's transaction is rolled back.
    with contextlib.closing(source):
        return write_dataset_volumes(
            dataset=dataset.name,
            header=encoder.header,
            extension=encoder.extension,
            batches=batches,
            volume_size_bytes=int(attempt.snapshot_settings["volume_size_bytes"]),
            open_volume=functools.partial(VolumeUpload, attempt, dataset.name),
            modified=snapshot.cutoff_at,
            progress=progress,
        )


def _write_parquet(
    attempt: ProductionAttempt, snapshot: PackageSnapshot, dataset: PackagedDataset, progress: Progress
) -> list[VolumeResult]:
    """The dataset's Parquet volumes, uploaded as they are written. On PostgreSQL the rows come typed
    from the database's binary COPY as Arrow batches, converted in native code (several times
    faster than converting typed rows in Python)."""
    # Imported here: pyarrow costs every process that loads it about 50 MB.
    from app.rendering.package.parquet_volumes import arrow_schema, database_batches, row_batches

    schema = arrow_schema(dataset.column_shapes)
    source: Generator
    if snapshot.can_copy:
        source = read_ahead(snapshot.arrow_batches(dataset), name=f"read {dataset.name}", ahead=READ_AHEAD_BATCHES)
        batches = database_batches(source, schema)
    else:
        source = snapshot.batches(dataset)
        batches = row_batches(source, schema)
    return _parquet_volumes(
        attempt, dataset, source, batches, functools.partial(VolumeUpload, attempt, dataset.name), progress
    )


def _parquet_volumes(
    attempt: ProductionAttempt,
    dataset: PackagedDataset,
    source: Generator,
    batches: Iterable,
    open_volume: Callable[[int], VolumeTarget],
    progress: Progress | None,
) -> list[VolumeResult]:
    from app.rendering.package.parquet_volumes import write_parquet_volumes

    with contextlib.closing(source):
        return write_parquet_volumes(
            dataset=dataset.name,
            columns=dataset.column_shapes,
            batches=batches,
            volume_size_bytes=int(attempt.snapshot_settings["volume_size_bytes"]),
            open_volume=open_volume,
            progress=progress,
        )


def _upload_spooled(
    attempt: ProductionAttempt, dataset: PackagedDataset, spooled: SpooledDataset, progress: Progress
) -> list[VolumeResult]:
    """Each spooled volume's file uploaded and recorded as the volume it is, then freed."""
    rows = size = 0
    for volume, file in zip(spooled.volumes, spooled.files, strict=True):
        upload = VolumeUpload(attempt, dataset.name, volume.sequence)
        with file:
            shutil.copyfileobj(file, upload)
        upload.close(volume)
        rows, size = rows + volume.row_count, size + volume.size_bytes
        progress(rows, size)
    return spooled.volumes


def _manifest_volume(attempt: ProductionAttempt, volume: VolumeResult) -> ManifestVolume:
    key = volume_key(attempt.prefix, volume.dataset, volume.sequence, attempt.format)
    return ManifestVolume(
        relative_to_package(key, attempt.prefix), volume.entry_name, volume.size_bytes, volume.row_count, volume.sha256
    )


class VolumeUpload:
    """A volume's multipart upload: recorded before it opens, parts recorded as they go, completed
    (and the volume row with it) only while the attempt is current."""

    def __init__(self, attempt: ProductionAttempt, dataset: str, sequence: int):
        self._attempt = attempt
        self._key = volume_key(attempt.prefix, dataset, sequence, attempt.format)
        with attempt.fenced():
            self._volume_id = export_volume.open_volume(
                attempt.execution_id, attempt.number, dataset, sequence, self._key
            )
        self._upload = attempt.storage.begin_upload(self._key)
        attempt.open_uploads[self._volume_id] = self._upload
        export_volume.record_upload(self._volume_id, self._upload.upload_id)
        self._buffer = PartBuffer(attempt.storage.part_size, self._send)
        self._parts = 0

    def write(self, data: bytes) -> None:
        self._buffer.write(data)

    def _send(self, part: bytearray) -> None:
        self._upload.upload_part(part)
        self._parts += 1
        export_volume.record_part(self._volume_id, self._parts, len(part))

    def close(self, volume: VolumeResult) -> None:
        self._buffer.close()
        attempt = self._attempt
        # Checked after the last part and before completing: a restart after this check aborts
        # the upload (or removes the object), so a stale attempt never leaves a volume behind.
        attempt.ensure_current()
        size = self._upload.complete()
        del attempt.open_uploads[self._volume_id]
        if size != volume.size_bytes:
            raise StorageError(f"volume {self._key}: stored {size} bytes, wrote {volume.size_bytes}")
        with attempt.fenced():
            export_volume.complete(
                self._volume_id,
                attempt.execution_id,
                attempt.number,
                size_bytes=size,
                sha256=volume.sha256,
                row_count=volume.row_count,
            )
        attempt.counts.volumes += 1
