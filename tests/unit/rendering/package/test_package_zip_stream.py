"""The streamed one-entry zip: readable by zipfile and unzip, and never larger than its bound."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import threading
import zipfile
from datetime import UTC, datetime

import pytest

from app.rendering.package.zip_stream import ZipEntryStream

MODIFIED = datetime(2026, 12, 1, 3, 4, 6, tzinfo=UTC)


class _Unseekable:
    """A sink like a multipart upload: bytes go out in order, nothing can be rewritten."""

    def __init__(self):
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.chunks.append(bytes(data))

    def value(self) -> bytes:
        return b"".join(self.chunks)


def _archive(payloads: list[bytes], name: str = "rows.csv") -> bytes:
    sink = _Unseekable()
    stream = ZipEntryStream(sink.write, name, MODIFIED)
    for payload in payloads:
        stream.write(payload)
    stream.close()
    assert stream.size == len(sink.value())
    return sink.value()


def test_zipfile_reads_back_the_exact_bytes_written_in_pieces():
    payloads = [os.urandom(1000), b"a,b\r\n" * 50_000, "Zoë Ødegaard\r\n".encode()]
    archive = zipfile.ZipFile(io.BytesIO(_archive(payloads)))
    assert archive.testzip() is None
    assert archive.namelist() == ["rows.csv"]
    assert archive.read("rows.csv") == b"".join(payloads)
    assert archive.getinfo("rows.csv").date_time == (2026, 12, 1, 3, 4, 6)


def test_unzip_tests_the_archive_clean(tmp_path):
    path = tmp_path / "volume.zip"
    path.write_bytes(_archive([b"x" * 300_000, os.urandom(70_000)]))
    assert shutil.which("unzip"), "unzip is installed on the test machines (Debian's unzip package)"
    result = subprocess.run(["unzip", "-t", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No errors detected" in result.stdout


def test_an_empty_entry_is_a_valid_archive():
    archive = zipfile.ZipFile(io.BytesIO(_archive([])))
    assert archive.read("rows.csv") == b""


def test_size_bound_holds_for_incompressible_input_after_every_write():
    sink = _Unseekable()
    stream = ZipEntryStream(sink.write, "noise.bin", MODIFIED)
    for _ in range(20):
        chunk = os.urandom(50_000)
        bound = stream.size_if_closed_after(len(chunk))
        stream.write(chunk)
        stream.flush()
        assert stream.size_if_closed_after(0) <= bound
    bound = stream.size_if_closed_after(0)
    stream.close()
    assert stream.size <= bound


def test_flush_tightens_the_bound_to_what_is_written():
    sink = _Unseekable()
    stream = ZipEntryStream(sink.write, "rows.csv", MODIFIED)
    stream.write(b"same line\r\n" * 100_000)
    loose = stream.size_if_closed_after(0)
    stream.flush()
    assert stream.size_if_closed_after(0) < loose / 10


def test_a_failing_sink_is_raised_to_the_writer_and_abandoning_the_stream_ends_its_thread():
    """Writing out what was deflated fails (storage refused it): the writer hears of it, and
    abandoning the stream leaves no thread behind."""
    threads_before = threading.active_count()

    def refuse(data: bytes) -> None:
        if len(data) > 200:  # the local header goes through; the first deflated piece does not
            raise OSError("storage refused the write")

    stream = ZipEntryStream(refuse, "refused.csv", MODIFIED)
    stream.write(os.urandom(64 * 1024))
    with pytest.raises(OSError, match="storage refused"):
        stream.flush()
    stream.abandon()

    assert threading.active_count() == threads_before


def test_closing_a_stream_ends_its_thread():
    threads_before = threading.active_count()
    _archive([b"x" * 10_000])
    assert threading.active_count() == threads_before
