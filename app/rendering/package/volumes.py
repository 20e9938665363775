"""One dataset's rows into zipped volumes, each a complete zip no larger than the volume size.

The caller opens each volume's target (a multipart upload, a file) through `open_volume` and
gets the finished volume's size, row count and SHA-256 in `VolumeTarget.close`; the checksum is
computed over the bytes as they stream out, never by reading them back.

Records arrive in batches: rows encoded here (`encoded_batches`, from a server-side cursor's
fetches) or records the database already formatted (`record_batches`, batches of CSV records,
one per row, from PostgreSQL's COPY, app/data/package_snapshot.py). A batch is written whole when
the bound of app/rendering/package/zip_stream.py says it fits; otherwise the compressor is flushed to tighten
the bound, and if it still does not fit the batch goes record by record, the volume closing
before the first record that would push it past the cap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from app.domain.errors import Conflict
from app.rendering.csv_writer import crlf_records
from app.rendering.package.encoders import CsvEncoder, JsonLinesEncoder
from app.rendering.package.zip_stream import DEFAULT_COMPRESSION_LEVEL, ZipEntryStream

# A batch is held two or three times over (its records, the joined batch, the queue of the volume's
# deflating thread): 2,000 records of about 155 bytes held 4-5 MB less at the peak than 5,000 did,
# for no more CPU (bench/README.md, issue 31).
RECORDS_PER_BATCH = 2000


class VolumeTooSmall(Conflict):
    """Not even one row (or the CSV header) fits in an empty volume of the configured size."""


class VolumeOverflow(RuntimeError):
    """A Parquet volume ended larger than the volume size: the estimate of its last row group was wrong.

    Outside DomainError: the writer's mistake, not the person's; package production logs it."""


@dataclass(frozen=True)
class VolumeResult:
    dataset: str
    sequence: int
    entry_name: str
    row_count: int
    size_bytes: int
    sha256: str


class VolumeTarget(Protocol):
    def write(self, data: bytes) -> object: ...

    def close(self, volume: VolumeResult) -> None:
        """The volume is complete: store it (the bytes written are all of it)."""


class RecordBatch(Protocol):
    rows: int

    def data(self) -> bytes:
        """Every record of the batch, joined."""

    def records(self) -> Sequence[bytes]:
        """One bytes per row (asked for only when the batch must be split)."""


class _EncodedRows:
    def __init__(self, encoder: CsvEncoder | JsonLinesEncoder, rows: Sequence[Sequence]):
        self._encoder, self._rows, self.rows = encoder, rows, len(rows)

    def data(self) -> bytes:
        return self._encoder.encode(self._rows)

    def records(self) -> list[bytes]:
        return [self._encoder.encode((row,)) for row in self._rows]


class _CopiedRecords:
    def __init__(self, records: Sequence[bytes | memoryview]):
        self._records, self.rows = records, len(records)

    def data(self) -> bytes:
        return crlf_records(self._records)

    def records(self) -> list[bytes]:
        return [crlf_records((record,)) for record in self._records]


def encoded_batches(
    encoder: CsvEncoder | JsonLinesEncoder, batches: Iterable[Sequence[Sequence]]
) -> Iterator[RecordBatch]:
    """Batches of rows (tuples of typed values), encoded by `encoder` as they are written."""
    return (_EncodedRows(encoder, batch) for batch in batches if batch)


def record_batches(batches: Iterable[Sequence[bytes | memoryview]]) -> Iterator[RecordBatch]:
    """Batches of CSV records already encoded, one per row, each ending with `\n` as PostgreSQL's
    COPY writes them; the package's records end with CRLF (RFC 4180), so the last byte of each is
    replaced (a line break inside a quoted value is the value's own and stays)."""
    return (_CopiedRecords(batch) for batch in batches if batch)


# (rows written so far in this dataset, bytes written so far in this dataset's closed and open volumes)
Progress = Callable[[int, int], None]


def entry_name(dataset: str, sequence: int, extension: str) -> str:
    return f"{dataset}-{sequence:05d}.{extension}"


class _Volume:
    def __init__(self, target: VolumeTarget, dataset: str, sequence: int, name: str, modified: datetime, level: int):
        self.target = target
        self.dataset = dataset
        self.sequence = sequence
        self.name = name
        self.rows = 0
        self._sha256 = hashlib.sha256()
        self.zip = ZipEntryStream(self._out, name, modified, level)

    def _out(self, data: bytes) -> None:
        self._sha256.update(data)
        self.target.write(data)

    def finish(self) -> VolumeResult:
        self.zip.close()
        result = VolumeResult(
            self.dataset, self.sequence, self.name, self.rows, self.zip.size, self._sha256.hexdigest()
        )
        self.target.close(result)
        return result


def write_dataset_volumes(
    *,
    dataset: str,
    header: bytes,
    extension: str,
    batches: Iterable[RecordBatch],
    volume_size_bytes: int,
    open_volume: Callable[[int], VolumeTarget],
    modified: datetime,
    progress: Progress | None = None,
    compression_level: int = DEFAULT_COMPRESSION_LEVEL,
) -> list[VolumeResult]:
    """Write every record of `batches` into volumes 1, 2, … of `dataset`, each file starting with
    `header` (b"" for none); a dataset without rows still gets one volume (with its header), so its
    columns are visible. Returns the volumes."""
    done: list[VolumeResult] = []
    closed_bytes = 0
    rows_written = 0

    def start(sequence: int) -> _Volume:
        volume = _Volume(
            open_volume(sequence),
            dataset,
            sequence,
            entry_name(dataset, sequence, extension),
            modified,
            compression_level,
        )
        if header:
            if not fits(volume, len(header)):
                volume.zip.abandon()
                raise VolumeTooSmall(
                    f"A volume of {volume_size_bytes} bytes cannot hold even the header of dataset {dataset!r}."
                )
            volume.zip.write(header)
        return volume

    def fits(volume: _Volume, size: int) -> bool:
        if volume.zip.size_if_closed_after(size) <= volume_size_bytes:
            return True
        volume.zip.flush()
        return volume.zip.size_if_closed_after(size) <= volume_size_bytes

    volume = start(1)
    try:
        for batch in batches:
            data = batch.data()
            if fits(volume, len(data)):
                volume.zip.write(data)
                volume.rows += batch.rows
            else:
                del data
                for line in batch.records():
                    if not fits(volume, len(line)):
                        if volume.rows == 0:
                            raise VolumeTooSmall(
                                f"A row of dataset {dataset!r} ({len(line)} bytes) does not fit in a volume of "
                                f"{volume_size_bytes} bytes."
                            )
                        done.append(volume.finish())
                        closed_bytes += done[-1].size_bytes
                        volume = start(volume.sequence + 1)
                        if not fits(volume, len(line)):
                            raise VolumeTooSmall(
                                f"A row of dataset {dataset!r} ({len(line)} bytes) does not fit in a volume of "
                                f"{volume_size_bytes} bytes."
                            )
                    volume.zip.write(line)
                    volume.rows += 1
            rows_written += batch.rows
            if progress is not None:
                progress(rows_written, closed_bytes + volume.zip.size)
    except BaseException:
        volume.zip.abandon()  # its deflating thread ends with it; the caller discards the volume
        raise
    done.append(volume.finish())
    if progress is not None:
        progress(rows_written, closed_bytes + done[-1].size_bytes)
    return done
