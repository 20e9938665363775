"""One dataset's rows into zipped volumes, each a complete zip no larger than the volume size.

The caller opens each volume's target (a multipart upload, a file) through `open_volume` and
gets the finished volume's size, row count and SHA-256 in `VolumeTarget.close`; the checksum is
computed over the bytes as they stream out, never by reading them back.

Rows arrive in batches (a server-side cursor's fetches). A batch is encoded at once and written
whole when the bound of app/rendering/package/zip_stream.py says it fits; otherwise the
compressor is flushed to tighten the bound, and if it still does not fit the batch goes row by
row, the volume closing before the first row that would push it past the cap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from app.rendering.package.encoders import encoder_for
from app.rendering.package.zip_stream import DEFAULT_COMPRESSION_LEVEL, ZipEntryStream


class VolumeTooSmall(ValueError):
    """Not even one row (or the CSV header) fits in an empty volume of the configured size."""


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


# (rows written so far in this dataset, bytes written so far in this dataset's closed and open volumes)
Progress = Callable[[int, int], None]


def entry_name(dataset: str, sequence: int, extension: str) -> str:
    return f"{dataset}-{sequence:05d}.{extension}"


class _Volume:
    def __init__(self, target: VolumeTarget, dataset: str, sequence: int, name: str, modified: datetime,
                 level: int):
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
        result = VolumeResult(self.dataset, self.sequence, self.name, self.rows, self.zip.size,
                              self._sha256.hexdigest())
        self.target.close(result)
        return result


def write_dataset_volumes(
    *,
    dataset: str,
    names: Sequence[str],
    types: Sequence[str],
    batches: Iterable[Sequence[Sequence]],
    format: str,
    volume_size_bytes: int,
    open_volume: Callable[[int], VolumeTarget],
    modified: datetime,
    progress: Progress | None = None,
    compression_level: int = DEFAULT_COMPRESSION_LEVEL,
) -> list[VolumeResult]:
    """Write every row of `batches` into volumes 1, 2, … of `dataset`; a dataset without rows
    still gets one volume (with the CSV header), so its columns are visible. Returns the volumes."""
    encoder = encoder_for(format, names, types)
    done: list[VolumeResult] = []
    closed_bytes = 0
    rows_written = 0

    def start(sequence: int) -> _Volume:
        volume = _Volume(open_volume(sequence), dataset, sequence,
                         entry_name(dataset, sequence, encoder.extension), modified, compression_level)
        if encoder.header:
            if not fits(volume, len(encoder.header)):
                raise VolumeTooSmall(
                    f"A volume of {volume_size_bytes} bytes cannot hold even the header of dataset {dataset!r}."
                )
            volume.zip.write(encoder.header)
        return volume

    def fits(volume: _Volume, size: int) -> bool:
        if volume.zip.size_if_closed_after(size) <= volume_size_bytes:
            return True
        volume.zip.flush()
        return volume.zip.size_if_closed_after(size) <= volume_size_bytes

    volume = start(1)
    for batch in batches:
        if not batch:
            continue
        data = encoder.encode(batch)
        if fits(volume, len(data)):
            volume.zip.write(data)
            volume.rows += len(batch)
        else:
            for row in batch:
                line = encoder.encode((row,))
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
        rows_written += len(batch)
        if progress is not None:
            progress(rows_written, closed_bytes + volume.zip.size)
    done.append(volume.finish())
    if progress is not None:
        progress(rows_written, closed_bytes + done[-1].size_bytes)
    return done
