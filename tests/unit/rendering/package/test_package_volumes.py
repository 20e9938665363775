"""Splitting a dataset into volumes: each a complete zip under the cap, rows in order, checksums true."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import zipfile
from datetime import UTC, datetime

import pytest

from app.rendering.package.encoders import encoder_for
from app.rendering.package.volumes import (
    VolumeResult,
    VolumeTooSmall,
    encoded_batches,
    record_batches,
    write_dataset_volumes,
)

MODIFIED = datetime(2026, 12, 1, tzinfo=UTC)


class _Target:
    def __init__(self, store: dict[int, tuple[bytes, VolumeResult]], sequence: int):
        self._store, self._sequence, self._buffer = store, sequence, io.BytesIO()

    def write(self, data: bytes) -> None:
        self._buffer.write(data)

    def close(self, volume: VolumeResult) -> None:
        self._store[self._sequence] = (self._buffer.getvalue(), volume)


def _write(rows, cap: int, batch: int = 500, format: str = "csv", progress=None):
    store: dict[int, tuple[bytes, VolumeResult]] = {}
    batches = [rows[i : i + batch] for i in range(0, len(rows), batch)]
    encoder = encoder_for(format, ["id", "note"], ["integer", "text"])
    results = write_dataset_volumes(
        dataset="notes",
        header=encoder.header,
        extension=encoder.extension,
        batches=encoded_batches(encoder, batches),
        volume_size_bytes=cap,
        open_volume=lambda sequence: _Target(store, sequence),
        modified=MODIFIED,
        progress=progress,
    )
    return results, store


def _rows(count: int) -> list[tuple[int, str]]:
    # Random hex compresses about 2:1, so the cap is reached quickly but not trivially.
    return [(i, os.urandom(40).hex()) for i in range(count)]


def test_volumes_never_exceed_the_cap_and_each_is_a_complete_zip():
    rows = _rows(20_000)
    cap = 200_000
    results, store = _write(rows, cap)
    assert len(results) > 3
    read_back = []
    for sequence, (data, volume) in sorted(store.items()):
        assert len(data) == volume.size_bytes <= cap
        archive = zipfile.ZipFile(io.BytesIO(data))
        assert archive.testzip() is None
        records = list(csv.reader(io.StringIO(archive.read(volume.entry_name).decode(), newline="")))
        assert records[0] == ["id", "note"]
        assert len(records) - 1 == volume.row_count
        read_back.extend((int(i), note) for i, note in records[1:])
        assert volume.sequence == sequence and volume.entry_name == f"notes-{sequence:05d}.csv"
    assert read_back == rows


def test_volumes_use_most_of_the_cap_before_splitting():
    results, _ = _write(_rows(20_000), 200_000)
    assert all(volume.size_bytes > 190_000 for volume in results[:-1])


def test_each_volume_checksum_is_the_sha256_of_its_bytes():
    results, store = _write(_rows(5000), 100_000)
    for data, volume in store.values():
        assert volume.sha256 == hashlib.sha256(data).hexdigest()
    assert len(results) == len(store)


def test_a_dataset_without_rows_gets_one_volume_with_its_header():
    results, store = _write([], 100_000)
    assert [(volume.sequence, volume.row_count) for volume in results] == [(1, 0)]
    data, volume = store[1]
    assert zipfile.ZipFile(io.BytesIO(data)).read(volume.entry_name) == b'"id","note"\r\n'


def test_a_row_larger_than_a_volume_is_refused_with_a_clear_error():
    with pytest.raises(VolumeTooSmall, match="does not fit in a volume of 2000 bytes"):
        _write([(1, os.urandom(4000).hex())], 2000)


def test_progress_reports_rows_and_bytes_written_so_far():
    seen: list[tuple[int, int]] = []
    results, _ = _write(_rows(3000), 50_000, progress=lambda rows, size: seen.append((rows, size)))
    assert seen[-1] == (3000, sum(volume.size_bytes for volume in results))
    assert [rows for rows, _ in seen] == sorted(rows for rows, _ in seen)


def test_json_lines_volumes_split_on_whole_lines():
    rows = _rows(5000)
    results, store = _write(rows, 60_000, format="jsonl")
    assert len(results) > 2
    lines = []
    for _, (data, volume) in sorted(store.items()):
        lines.extend(zipfile.ZipFile(io.BytesIO(data)).read(volume.entry_name).decode().splitlines())
    assert len(lines) == len(rows)


def test_records_from_copy_end_with_crlf_and_keep_their_own_line_breaks():
    store: dict[int, tuple[bytes, VolumeResult]] = {}
    records = [memoryview(b'1,"a"\n'), memoryview(b'2,"two\nlines"\n'), memoryview(b"3,\n")]
    write_dataset_volumes(
        dataset="notes",
        header=b'"id","note"\r\n',
        extension="csv",
        batches=record_batches([records[:2], records[2:]]),
        volume_size_bytes=10_000,
        open_volume=lambda sequence: _Target(store, sequence),
        modified=MODIFIED,
    )
    data, volume = store[1]
    assert volume.row_count == 3
    assert zipfile.ZipFile(io.BytesIO(data)).read(volume.entry_name) == (
        b'"id","note"\r\n1,"a"\r\n2,"two\nlines"\r\n3,\r\n'
    )


def test_a_batch_of_records_from_copy_split_across_volumes_keeps_every_record_whole():
    store: dict[int, tuple[bytes, VolumeResult]] = {}
    records = [f'{number},"note {number}\nsecond line {number * 7919 % 1000:03d}"\n'.encode() for number in range(400)]
    results = write_dataset_volumes(
        dataset="notes",
        header=b'"id","note"\r\n',
        extension="csv",
        batches=record_batches([[memoryview(record) for record in records]]),
        volume_size_bytes=3_000,
        open_volume=lambda sequence: _Target(store, sequence),
        modified=MODIFIED,
    )
    assert len(results) > 1
    written = b""
    for _, (data, volume) in sorted(store.items()):
        content = zipfile.ZipFile(io.BytesIO(data)).read(volume.entry_name)
        assert content.startswith(b'"id","note"\r\n')
        written += content.removeprefix(b'"id","note"\r\n')
    assert written == b"".join(record[:-1] + b"\r\n" for record in records)
