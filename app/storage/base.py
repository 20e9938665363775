"""One storage interface for export files and packages; backends in filesystem.py and s3.py.

Keys are relative, slash-separated paths confined by `check_key`: no absolute paths, no `..`,
no empty segments, no control characters. Large objects are written through a multipart
upload (`begin_upload`) so memory never holds more than one part.
"""

from __future__ import annotations

import contextlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path

_SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9._=+-]+$")


class StorageError(Exception):
    """The store refused or failed an operation; jobs record it as `storage_error`.

    Outside app/domain/errors.py's DomainError: the store's trouble, never the person's doing. A
    route that reads the store answers 503 with a sentence of its own, and the log has the key."""


class StorageFull(StorageError):
    """The store has no room left for what is written (a full disk, a quota, a full MinIO): jobs
    record it as `storage_full`, which a retry can get past only once space is freed."""


class InvalidKey(StorageError):
    """A key that would escape its prefix or is not a plain relative path."""


class ObjectMissing(StorageError):
    """No object is stored under the key (read, size)."""


def check_key(key: str) -> str:
    segments = key.split("/")
    if not key or key.startswith("/") or any(s in ("", ".", "..") for s in segments):
        raise InvalidKey(f"invalid storage key: {key!r}")
    if not all(_SAFE_SEGMENT.match(s) for s in segments):
        raise InvalidKey(f"invalid characters in storage key: {key!r}")
    return key


def check_key_under(key: str, prefix: str) -> str:
    """INV-14: a key must lie inside its prefix (a package's, for example)."""
    check_key(key)
    check_key(prefix.rstrip("/"))
    if not key.startswith(prefix.rstrip("/") + "/"):
        raise InvalidKey(f"storage key {key!r} is outside {prefix!r}")
    return key


class MultipartUpload(ABC):
    """An upload in progress. Parts are sent in order; `complete` makes the object appear whole."""

    key: str
    upload_id: str

    @abstractmethod
    def upload_part(self, data: bytes | bytearray) -> None:
        """Send the next part. `data` is read only during the call: the caller refills the same
        buffer for the part after (`PartBuffer`), so a backend must not keep it."""

    @abstractmethod
    def complete(self) -> int:
        """Publish the object; returns its size in bytes."""

    @abstractmethod
    def abort(self) -> None:
        """Discard the parts sent; the key is left as it was."""


class Storage(ABC):
    part_size: int

    @abstractmethod
    def begin_upload(self, key: str) -> MultipartUpload: ...

    @abstractmethod
    def abort_uploads(self, key: str) -> int:
        """Abort every unfinished upload to `key` (a restarted job's leftovers); returns how many."""

    @abstractmethod
    def put_bytes(self, key: str, data: bytes) -> None: ...

    @abstractmethod
    def read_chunks(self, key: str, chunk_size: int = 256 * 1024) -> Iterator[bytes]:
        """The object's bytes in chunks; a missing key raises `ObjectMissing` at the call, not later."""

    @abstractmethod
    def size(self, key: str) -> int: ...

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def delete(self, key: str) -> None: ...

    @abstractmethod
    def list_keys(self, prefix: str) -> list[str]:
        """Keys of stored objects that start with `prefix` (a plain string prefix), sorted."""

    @abstractmethod
    def check(self) -> None:
        """Raise if the store cannot be reached; used by /healthz."""

    @abstractmethod
    def download_url(self, key: str, file_name: str, content_type: str, expires_in: int) -> str | None:
        """A URL, valid for `expires_in` seconds, from which a browser fetches the object itself with
        these Content-Disposition (an attachment named `file_name`) and Content-Type headers; None
        when this store's objects are sent by the web process from `local_path`.

        `ObjectMissing` when no object is stored under `key`, so a gone file is refused here rather
        than by the store after a redirect.
        """

    def local_path(self, key: str) -> Path:
        """The object's file on this machine, for a store whose `download_url` is None;
        `ObjectMissing` when there is none."""
        raise StorageError(f"{type(self).__name__} keeps no objects on this machine; use download_url")

    def writer(self, key: str) -> PartWriter:
        return PartWriter(self, key)


class PartBuffer:
    """Bytes cut into parts of exactly `part_size` (the last may be shorter), gathered in one buffer
    that every part reuses: memory holds one part and no copy of it (a copy per part was 8 MiB of
    a package job's peak, bench/README.md). Each part is handed to `send` as that buffer itself,
    which the next write overwrites, hence `MultipartUpload.upload_part`'s rule."""

    def __init__(self, part_size: int, send: Callable[[bytearray], None]):
        self._part_size = part_size
        self._send = send
        # Grown by the first part's writes, so an object smaller than a part holds only its bytes.
        self._buffer = bytearray()
        self._filled = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        end = self._filled + len(data)
        if end < self._part_size:  # most writes: a CSV chunk, a deflated batch
            self._buffer[self._filled : end] = data
            self._filled = end
            return
        with memoryview(data) as view:
            taken = 0
            while taken < len(view):
                piece = view[taken : taken + self._part_size - self._filled]
                self._buffer[self._filled : self._filled + len(piece)] = piece
                self._filled += len(piece)
                taken += len(piece)
                if self._filled == self._part_size:
                    self._send(self._buffer)
                    self._filled = 0

    def close(self) -> None:
        """Send what is left, if anything is, as the last part."""
        if self._filled:
            del self._buffer[self._filled :]
            self._send(self._buffer)
            self._buffer = bytearray()
            self._filled = 0


class PartWriter:
    """A write-only binary stream over a multipart upload, buffering one part at a time.

    Used as a context manager: a clean exit completes the upload, an exception aborts it.
    """

    def __init__(self, storage: Storage, key: str):
        self._storage = storage
        self._key = check_key(key)
        self._upload: MultipartUpload | None = None
        self._parts = PartBuffer(storage.part_size, self._send)
        self._parts_sent = 0
        self.size: int | None = None

    def __enter__(self) -> PartWriter:
        self._storage.abort_uploads(self._key)
        self._upload = self._storage.begin_upload(self._key)
        return self

    def write(self, data: bytes) -> int:
        self._parts.write(data)
        return len(data)

    def _send(self, part: bytes | bytearray) -> None:
        assert self._upload is not None
        self._upload.upload_part(part)
        self._parts_sent += 1

    def __exit__(self, exc_type, exc, tb) -> None:
        assert self._upload is not None
        if exc_type is not None:
            # The caller's exception is the one to report; a restart's abort_uploads cleans up later.
            with contextlib.suppress(StorageError):
                self._upload.abort()
            return
        try:
            self._parts.close()
            # An empty object still needs one (empty) part for the upload to complete.
            if self._parts_sent == 0:
                self._send(b"")
            self.size = self._upload.complete()
        except BaseException:
            with contextlib.suppress(StorageError):  # report what stopped the upload, not the clean-up
                self._upload.abort()
            raise


class ChunkStream(Iterator[bytes]):
    """An opened object's chunks. `close()` (Werkzeug calls it after a response) releases the handle
    even when the stream was never read to the end."""

    def __init__(self, chunks: Iterator[bytes], close: Callable[[], None]):
        self._chunks = chunks
        self._close = close
        self._closed = False

    def __next__(self) -> bytes:
        try:
            return next(self._chunks)
        except BaseException:  # the end (StopIteration) or a failure: either way the handle goes
            self.close()
            raise

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._close()
