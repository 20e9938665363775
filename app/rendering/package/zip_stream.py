"""A one-entry zip archive written front to back into a sink that cannot seek (a multipart upload).

Python's zipfile can stream too, but it gives no way to know how large the archive will be
before it is closed, and a volume must never exceed its cap. This writer deflates through its
own compressor, so it can flush it (Z_SYNC_FLUSH: everything given so far is emitted, the
dictionary is kept) and then bound the final size exactly: bytes already written, plus
deflate's worst case for the input given since the last flush, plus the fixed-size trailer.

Deflating runs in a thread of its own, fed through a short queue, while the caller reads and
encodes the next rows: `psql | gzip` overlaps the two the same way, and zlib-ng (zlib's API and
deflate's standard stream, 1.5 times as fast as zlib at level 6 for 1.07 times the bytes,
measured in bench/README.md) releases the GIL while it compresses, as does the CRC. What it deflated is
written out by the caller's own thread at its next call (the sink may record each part in the
database, which belongs to that thread). `abandon()` ends the thread of a stream that will not be
closed.

The layout is the standard streamed one (APPNOTE 6.3.x): a local header with the general
purpose bit 3 set (sizes and CRC follow the data in a data descriptor) and a ZIP64 extra field,
so entries beyond 4 GiB need nothing special; a 24-byte ZIP64 data descriptor; the central
directory; a ZIP64 end record when the archive passes 4 GiB; the end of central directory.
`zipfile` and `unzip -t` read the result (tests/unit/rendering/package/test_zip_stream.py).
"""

from __future__ import annotations

import queue
import struct
import threading
from collections.abc import Callable
from datetime import datetime

from zlib_ng import zlib_ng

# zlib-ng's level 4 against its 6, on the 762 MB of a 5,000,000-row package's records: 3.4 against
# 4.7 CPU seconds, 1.07 times the bytes of `gzip -6` against 0.99 times. On two cores the package's
# reading thread, its deflating thread and the database share the machine, so the 1.3 seconds
# saved are most of the margin to `psql | gzip -6` (issue 31: its time, and at most 1.1 times
# its bytes; bench/README.md, "After issue 31").
DEFAULT_COMPRESSION_LEVEL = 4
# Pieces handed to the deflating thread and not yet deflated: enough to keep it busy while the
# caller makes the next, few enough that memory holds only a handful of batches.
HANDED_OVER_PIECES = 4

_ZIP64_VERSION = 45  # 4.5: ZIP64 extensions
_FLAGS = 0x0008 | 0x0800  # sizes in a data descriptor; the name is UTF-8
_DEFLATED = 8
_UNIX = 3
_MAX32 = 0xFFFFFFFF
_REGULAR_FILE_MODE = 0o100644 << 16

_LOCAL_HEADER = struct.Struct("<4sHHHHHLLLHH")
_ZIP64_LOCAL_EXTRA = struct.Struct("<HHQQ")
_DATA_DESCRIPTOR = struct.Struct("<4sLQQ")
_CENTRAL_HEADER = struct.Struct("<4sBBBBHHHHLLLHHHHHLL")
_ZIP64_END = struct.Struct("<4sQHHLLQQQQ")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_END = struct.Struct("<4sHHHHLLH")

# Central header + its largest ZIP64 extra (two sizes) + ZIP64 end record + locator + end record.
_CLOSING_BYTES = (
    _DATA_DESCRIPTOR.size + _CENTRAL_HEADER.size + 4 + 16 + _ZIP64_END.size + _ZIP64_LOCATOR.size + _END.size
)


class _Abandoned(Exception):
    """What the deflating thread holds once the stream is given up: it skips what is left. Outside
    DomainError: the stream's own signal, which no person causes."""


def deflate_bound(input_bytes: int) -> int:
    """The most raw deflate can emit for `input_bytes` of new input, flushed (zlib's conservative
    `deflateBound`, plus a sync or final flush marker)."""
    return input_bytes + ((input_bytes + 7) >> 3) + ((input_bytes + 63) >> 6) + 5 + 16


def _dos_time(moment: datetime) -> tuple[int, int]:
    year = min(max(moment.year, 1980), 2107)
    date = (year - 1980) << 9 | moment.month << 5 | moment.day
    time = moment.hour << 11 | moment.minute << 5 | moment.second // 2
    return time, date


class ZipEntryStream:
    """Writes one archive holding one file named `name` through `write_out` (called with bytes).

    `write(data)` adds uncompressed bytes of the file; `size_if_closed_after(n)` is the largest
    the archive can be if `n` more bytes are written and it is then closed; `flush()` makes that
    bound tight again; `close()` writes the trailer. `size` is the bytes written out so far.
    """

    def __init__(
        self,
        write_out: Callable[[bytes], object],
        name: str,
        modified: datetime,
        level: int = DEFAULT_COMPRESSION_LEVEL,
    ):
        self._write_out = write_out
        self._name = name.encode("utf-8")
        self._time, self._date = _dos_time(modified)
        self._compressor = zlib_ng.compressobj(level, zlib_ng.DEFLATED, -zlib_ng.MAX_WBITS)
        self._crc = 0
        self._input_size = 0
        self._unflushed_input = 0
        self.size = 0
        self._closed = False
        self._handed_over: queue.Queue[bytes | None] = queue.Queue(maxsize=HANDED_OVER_PIECES)
        self._deflated: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._failure: BaseException | None = None
        self._deflater = threading.Thread(target=self._deflate_handed_over, name=f"deflate {name}", daemon=True)
        extra = _ZIP64_LOCAL_EXTRA.pack(1, 16, 0, 0)
        self._emit(
            _LOCAL_HEADER.pack(
                b"PK\x03\x04",
                _ZIP64_VERSION,
                _FLAGS,
                _DEFLATED,
                self._time,
                self._date,
                0,
                _MAX32,
                _MAX32,
                len(self._name),
                len(extra),
            )
            + self._name
            + extra
        )
        self._data_start = self.size
        self._deflater.start()

    def _deflate_handed_over(self) -> None:
        """The deflating thread: each piece handed over, in order, until the end (None)."""
        while (data := self._handed_over.get()) is not None:
            try:
                if self._failure is None:
                    self._crc = zlib_ng.crc32(data, self._crc)
                    self._deflated.put(self._compressor.compress(data))
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                self._failure = exc
            finally:
                self._handed_over.task_done()
        self._handed_over.task_done()

    def _write_out_deflated(self) -> None:
        """Write out what the thread has deflated by now; raise what failed there."""
        if self._failure is not None:
            failure, self._failure = self._failure, _Abandoned()
            raise failure
        while True:
            try:
                data = self._deflated.get_nowait()
            except queue.Empty:
                return
            self._emit(data)

    def _deflated_so_far(self) -> None:
        """Wait until every piece handed over is deflated, and write it out."""
        self._handed_over.join()
        self._write_out_deflated()

    def _stop_deflater(self) -> None:
        self._handed_over.put(None)
        self._deflater.join()

    def _emit(self, data: bytes) -> None:
        if data:
            self._write_out(data)
            self.size += len(data)

    def size_if_closed_after(self, more_input: int) -> int:
        return self.size + deflate_bound(self._unflushed_input + more_input) + len(self._name) + _CLOSING_BYTES

    def write(self, data: bytes) -> None:
        self._write_out_deflated()
        self._input_size += len(data)
        self._unflushed_input += len(data)
        self._handed_over.put(data)

    def flush(self) -> None:
        """Emit everything given so far, so the size bound no longer counts it as pending."""
        if not self._unflushed_input:
            return  # each flush costs a marker in the stream; an empty one buys nothing
        self._deflated_so_far()
        self._emit(self._compressor.flush(zlib_ng.Z_SYNC_FLUSH))
        self._unflushed_input = 0

    def abandon(self) -> None:
        """End the deflating thread of a stream that will not be closed (its writer failed)."""
        if self._closed:
            return
        self._closed = True
        self._failure = _Abandoned()
        self._stop_deflater()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._deflated_so_far()
        finally:
            self._closed = True
            self._stop_deflater()
        self._emit(self._compressor.flush(zlib_ng.Z_FINISH))
        compressed = self.size - self._data_start
        self._emit(_DATA_DESCRIPTOR.pack(b"PK\x07\x08", self._crc, compressed, self._input_size))

        central_offset = self.size
        sizes = []
        if self._input_size >= _MAX32:
            sizes.append(self._input_size)
        if compressed >= _MAX32:
            sizes.append(compressed)
        extra = struct.pack(f"<HH{len(sizes)}Q", 1, 8 * len(sizes), *sizes) if sizes else b""
        self._emit(
            _CENTRAL_HEADER.pack(
                b"PK\x01\x02",
                _ZIP64_VERSION,
                _UNIX,
                _ZIP64_VERSION,
                0,
                _FLAGS,
                _DEFLATED,
                self._time,
                self._date,
                self._crc,
                min(compressed, _MAX32),
                min(self._input_size, _MAX32),
                len(self._name),
                len(extra),
                0,
                0,
                0,
                _REGULAR_FILE_MODE,
                0,
            )
            + self._name
            + extra
        )
        central_size = self.size - central_offset
        if central_offset >= _MAX32:
            end64_offset = self.size
            self._emit(
                _ZIP64_END.pack(
                    b"PK\x06\x06",
                    _ZIP64_END.size - 12,
                    _ZIP64_VERSION,
                    _ZIP64_VERSION,
                    0,
                    0,
                    1,
                    1,
                    central_size,
                    central_offset,
                )
            )
            self._emit(_ZIP64_LOCATOR.pack(b"PK\x06\x07", 0, end64_offset, 1))
        self._emit(_END.pack(b"PK\x05\x06", 0, 0, 1, 1, central_size, min(central_offset, _MAX32), 0))
