"""The directory backend: one file per object under `root`, for one machine and for tests.

Objects are `root/<key>`. A multipart upload appends its parts, in order, to one file in
`root/.uploads/<upload_id>/` (with a `key` file naming its target), and `complete` syncs that
file and renames it into place, so a reader sees the old object or the whole new one and the
bytes are written once, never copied.
A single put is written whole by app/storage/atomic_write.py. Temporary names carry a `~`,
which no key may contain, so `list_keys` can never return them.
"""

from __future__ import annotations

import errno
import functools
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from app.storage.atomic_write import write_atomically
from app.storage.base import (
    ChunkStream,
    InvalidKey,
    MultipartUpload,
    ObjectMissing,
    Storage,
    StorageError,
    StorageFull,
    check_key,
)

STAGING_DIR = ".uploads"
_KEY_FILE = "key"
_DATA_FILE = "data~"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _refused(message: str, exc: OSError) -> StorageError:
    """The StorageError for an operating-system error: StorageFull when the disk or quota is full."""
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return (StorageFull if full else StorageError)(f"{message}: {_reason(exc)}")


class FilesystemStorage(Storage):
    def __init__(self, root: Path, part_size: int):
        self.root = Path(root)
        self.part_size = part_size

    # -- paths -------------------------------------------------------------------------------

    def _resolved_root(self) -> Path:
        return self.root.resolve()

    def _path(self, key: str) -> Path:
        """The file for `key`, refused unless it resolves (symbolic links followed) inside root."""
        check_key(key)
        if key.split("/")[0] == STAGING_DIR:
            raise InvalidKey(f"storage key {key!r} uses the reserved folder {STAGING_DIR!r}")
        root = self._resolved_root()
        path = (root / key).resolve()
        if not path.is_relative_to(root) or path == root:
            raise InvalidKey(f"storage key {key!r} resolves outside the storage folder")
        return path

    def _staging_root(self) -> Path:
        return self._resolved_root() / STAGING_DIR

    # -- writing -----------------------------------------------------------------------------

    def begin_upload(self, key: str) -> FilesystemUpload:
        self._path(key)
        upload_id = uuid.uuid4().hex
        staging = self._staging_root() / upload_id
        try:
            staging.mkdir(parents=True)
            (staging / _KEY_FILE).write_text(key, encoding="utf-8")
            (staging / _DATA_FILE).touch()  # an upload with no bytes is an empty object
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise _refused(f"cannot start an upload to {key!r} in {self.root}", exc) from exc
        return FilesystemUpload(self, key, upload_id, staging)

    def abort_uploads(self, key: str) -> int:
        check_key(key)
        staging_root = self._staging_root()
        if not staging_root.is_dir():
            return 0
        aborted = 0
        for staging in staging_root.iterdir():
            try:
                target = (staging / _KEY_FILE).read_text(encoding="utf-8")
            except OSError:
                continue  # not an upload folder, or another process removed it just now
            if target == key:
                shutil.rmtree(staging, ignore_errors=True)
                aborted += 1
        return aborted

    def put_bytes(self, key: str, data: bytes) -> None:
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, [data])
        except OSError as exc:
            raise _refused(f"cannot write {key!r} in {self.root}", exc) from exc

    # -- reading -----------------------------------------------------------------------------

    def read_chunks(self, key: str, chunk_size: int = 256 * 1024) -> Iterator[bytes]:
        path = self._path(key)
        try:
            handle = open(path, "rb")  # noqa: SIM115  (ChunkStream closes it)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise ObjectMissing(f"no stored object {key!r}") from exc
        except OSError as exc:
            raise _refused(f"cannot read {key!r}", exc) from exc
        return ChunkStream(self._chunks(key, handle, chunk_size), handle.close)

    @staticmethod
    def _chunks(key: str, handle, chunk_size: int) -> Iterator[bytes]:
        try:
            yield from iter(functools.partial(handle.read, chunk_size), b"")
        except OSError as exc:
            raise _refused(f"cannot read {key!r}", exc) from exc

    def size(self, key: str) -> int:
        path = self._path(key)
        if not path.is_file():
            raise ObjectMissing(f"no stored object {key!r}")
        try:
            return path.stat().st_size
        except OSError as exc:
            raise _refused(f"cannot read {key!r}", exc) from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def download_url(self, key: str, file_name: str, content_type: str, expires_in: int) -> None:
        """None: nothing but this machine reaches the folder, so the web process sends the file."""
        self.local_path(key)

    def local_path(self, key: str) -> Path:
        path = self._path(key)
        if not path.is_file():
            raise ObjectMissing(f"no stored object {key!r}")
        return path

    def delete(self, key: str) -> None:
        path = self._path(key)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise _refused(f"cannot delete {key!r}", exc) from exc

    def list_keys(self, prefix: str) -> list[str]:
        if prefix:
            check_key(prefix.rstrip("/"))
        root = self._resolved_root()
        # Walk only the deepest folder the prefix names in full; filter the rest by string.
        folder = root / prefix.rsplit("/", 1)[0] if "/" in prefix else root
        if not folder.resolve().is_relative_to(root):
            raise InvalidKey(f"prefix {prefix!r} resolves outside the storage folder")
        keys = []
        for directory, subdirectories, files in os.walk(folder):
            relative = Path(directory).relative_to(root).as_posix()
            if relative == ".":
                subdirectories[:] = [d for d in subdirectories if d != STAGING_DIR]
            for name in files:
                key = name if relative == "." else f"{relative}/{name}"
                if key.startswith(prefix) and _is_object_key(key):
                    keys.append(key)
        return sorted(keys)

    def check(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            probe = self._resolved_root() / f".~probe-{uuid.uuid4().hex}"
            probe.write_bytes(b"ok")
            probe.unlink()
        except OSError as exc:
            raise _refused(f"storage folder {str(self.root)!r} is not writable", exc) from exc


def _is_object_key(candidate: str) -> bool:
    """True for a stored object's key; false for staging files and temporary names."""
    try:
        check_key(candidate)
    except InvalidKey:
        return False
    return candidate.split("/")[0] != STAGING_DIR


class FilesystemUpload(MultipartUpload):
    def __init__(self, storage: FilesystemStorage, key: str, upload_id: str, staging: Path):
        self.key = key
        self.upload_id = upload_id
        self._storage = storage
        self._staging = staging
        self._data = staging / _DATA_FILE
        self._size = 0
        self._finished = False

    def upload_part(self, data: bytes | bytearray) -> None:
        if self._finished:
            raise StorageError(f"the upload to {self.key!r} is already finished")
        try:
            with open(self._data, "ab") as out:
                out.write(data)
        except OSError as exc:
            raise _refused(f"cannot write a part of {self.key!r}", exc) from exc
        self._size += len(data)

    def complete(self) -> int:
        if self._finished:
            raise StorageError(f"the upload to {self.key!r} is already finished")
        if not self._staging.is_dir():
            raise StorageError(f"the upload to {self.key!r} was aborted")
        target = self._storage._path(self.key)
        try:
            # Opened without creating it: an abort racing with this completion (a newer attempt's
            # abort_uploads) makes it fail here or at the rename, never publish an empty file.
            with open(self._data, "rb+") as out:
                os.fsync(out.fileno())
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self._data, target)
        except FileNotFoundError as exc:
            raise StorageError(f"the upload to {self.key!r} was aborted") from exc
        except OSError as exc:
            raise _refused(f"cannot write {self.key!r} in {self._storage.root}", exc) from exc
        self._finished = True
        shutil.rmtree(self._staging, ignore_errors=True)
        return self._size

    def abort(self) -> None:
        self._finished = True
        shutil.rmtree(self._staging, ignore_errors=True)
