"""A folder under DESTINATIONS_ROOT as a delivery destination (the embedded default).

Everything is confined under the root: the destination's folder and every object's file are
resolved (symbolic links followed) and refused unless they stay inside the root. Objects are
written as the storage's directory backend writes them (app/storage/atomic_write.py): to a
temporary file beside their target, renamed into place, so a reader sees the old file or the
whole new one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from app.destinations.base import DestinationRefused, DestinationStore
from app.storage.atomic_write import write_atomically
from app.storage.base import check_key

# How a place under the root is shown to people (a test's message, a delivery's location, an
# error): by its path under the root the operator configured, never the server's own path.
ROOT_NAME = "DESTINATIONS_ROOT"


class DirectoryDestination(DestinationStore):
    def __init__(self, *, root: str | None, path: str):
        if not root:
            raise DestinationRefused(
                "Directory destinations are not enabled on this server (DESTINATIONS_ROOT is not set).",
                "directory_not_configured",
            )
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise DestinationRefused(
                "The server's folder for directory destinations (DESTINATIONS_ROOT) does not exist.",
                "directory_missing",
            )
        self.path = path.strip("/")
        self.base = self._confined(self.root / self.path if self.path else self.root, self.path or "the top")

    def _confined(self, candidate: Path, shown: str) -> Path:
        resolved = candidate.resolve()
        if not resolved.is_relative_to(self.root):
            raise DestinationRefused(
                f"The destination path {shown!r} leads outside the server's folder for directory destinations.",
                "path_outside_root",
            )
        return resolved

    def _target(self, relative_key: str) -> Path:
        check_key(relative_key)
        target = self._confined(self.base / relative_key, f"{self.path}/{relative_key}" if self.path else relative_key)
        if not target.is_relative_to(self.base) or target == self.base:
            raise DestinationRefused(
                f"The object {relative_key!r} leads outside the destination's folder.", "path_outside_root"
            )
        return target

    def location(self, relative_key: str = "") -> str:
        return self._shown(self._target(relative_key) if relative_key else self.base)

    def _shown(self, path: str | Path) -> str:
        """`path` as people see it: under ROOT_NAME when it lies in the root, else its last part only."""
        path = Path(path)
        if not path.is_relative_to(self.root):
            return path.name
        inside = path.relative_to(self.root).as_posix()
        return ROOT_NAME if inside == "." else f"{ROOT_NAME}/{inside}"

    @contextlib.contextmanager
    def _paths_shown(self) -> Iterator[None]:
        """The system's errors name their files as people see them (_shown), keeping their kind."""
        try:
            yield
        except OSError as exc:
            if exc.filename is None:
                raise
            shown = OSError(exc.errno, exc.strerror, self._shown(exc.filename))
            raise shown from exc

    def put_bytes(self, relative_key: str, data: bytes) -> None:
        self.put_stream(relative_key, [data])

    def put_stream(self, relative_key: str, chunks: Iterable[bytes]) -> int:
        with self._paths_shown():
            return self._write(relative_key, chunks)

    def _write(self, relative_key: str, chunks: Iterable[bytes]) -> int:
        target = self._target(relative_key)
        target.parent.mkdir(parents=True, exist_ok=True)
        # Creating the folders may have met a symbolic link planted meanwhile: check again.
        target = self._target(relative_key)
        return write_atomically(target, chunks)

    def read_bytes(self, relative_key: str) -> bytes:
        with self._paths_shown():
            return self._target(relative_key).read_bytes()

    def delete(self, relative_key: str) -> None:
        with self._paths_shown():
            self._target(relative_key).unlink(missing_ok=True)
