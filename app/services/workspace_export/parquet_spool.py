"""A Parquet package's smaller datasets written ahead into local files while its largest is written.

A Parquet package on PostgreSQL waits on the database: one backend sends one dataset's binary
COPY at a time, and the driver and the writer keep up with it on the second core (bench/README.md,
session 31). While the package's thread writes the largest dataset, a thread of its own writes the
other datasets' volumes, one dataset after another, into temporary files, from a connection of its
own in the package's snapshot, so a second backend works beside the first. The package's thread
then uploads those files as the datasets' volumes, recording each as it records a volume it wrote
itself: the spooling thread records nothing and uploads nothing, so fencing, progress and failures
stay in the package's thread. A Parquet file does not depend on its volume's number or where it
is stored, so a spooled volume is byte for byte what the package's thread would have written.

The thread takes up a dataset only while the largest one is still being written (the rest are
written directly afterwards), so the spool holds at most what it wrote in that time. Its files
are anonymous temporary files: each is freed once its volume is uploaded, and the system frees
them all should the worker be killed, so nothing is left behind on disk.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from app.data.package_snapshot import PackagedDataset
from app.rendering.package.volumes import VolumeResult, VolumeTarget

# Writes one dataset's volumes through `open_volume` (a volume's sequence -> its target), stopping
# with SpoolStopped when `keep_going` returns False between batches.
WriteDataset = Callable[[PackagedDataset, Callable[[int], VolumeTarget], Callable[[], bool]], list[VolumeResult]]


class SpoolStopped(Exception):
    """The package stopped while a dataset was being spooled; nothing of it is used. A signal
    between the package's threads, which no person causes: not a DomainError."""


@dataclass(frozen=True)
class SpooledDataset:
    """A dataset whose volumes are complete, in order, each in its file (read from the start)."""

    volumes: list[VolumeResult]
    files: list[BinaryIO]


class _SpoolFile:
    """A volume's target: an anonymous temporary file, left open for the upload to read."""

    def __init__(self, opened: list[BinaryIO]):
        # Open past this call, for the package's thread to read; ParquetSpool closes what is left.
        self.file = tempfile.TemporaryFile(prefix="package-spool-")  # noqa: SIM115
        opened.append(self.file)

    def write(self, data: bytes) -> None:
        self.file.write(data)

    def close(self, volume: VolumeResult) -> None:
        self.file.seek(0)


class ParquetSpool:
    """Writes `datasets`, in order, in a thread of its own started on entering it, until
    `lead_finished()`; `take(dataset)` gives a dataset's spooled volumes, or None where the thread
    did not take it up. Leaving it stops the thread, waits for it, and frees every file."""

    def __init__(self, datasets: list[PackagedDataset], write: WriteDataset):
        self._datasets = datasets
        self._write = write
        self._lead_done = threading.Event()
        self._stopped = threading.Event()
        self._changed = threading.Condition()
        self._results: dict[str, SpooledDataset | BaseException] = {}
        self._finished = False
        self._opened: list[BinaryIO] = []
        self._thread = threading.Thread(target=self._run, name="spool parquet datasets", daemon=True)

    def __enter__(self) -> ParquetSpool:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stopped.set()
        self._thread.join()
        for file in self._opened:
            file.close()

    def lead_finished(self) -> None:
        """The largest dataset is written: take up no further dataset."""
        self._lead_done.set()

    def take(self, dataset: PackagedDataset) -> SpooledDataset | None:
        """The dataset's spooled volumes, once the thread has written them all; None if the thread
        stopped before taking it up (write it directly). A failure of its writing is raised here."""
        with self._changed:
            self._changed.wait_for(lambda: dataset.name in self._results or self._finished)
            result = self._results.get(dataset.name)
        if isinstance(result, BaseException):
            raise result
        return result

    def _run(self) -> None:
        try:
            for dataset in self._datasets:
                if self._lead_done.is_set() or self._stopped.is_set():
                    break
                result = self._spool(dataset)
                with self._changed:
                    self._results[dataset.name] = result
                    self._changed.notify_all()
                if isinstance(result, BaseException):
                    break
        finally:
            with self._changed:
                self._finished = True
                self._changed.notify_all()

    def _spool(self, dataset: PackagedDataset) -> SpooledDataset | BaseException:
        files: list[BinaryIO] = []

        def open_volume(sequence: int) -> VolumeTarget:
            target = _SpoolFile(self._opened)
            files.append(target.file)
            return target

        try:
            volumes = self._write(dataset, open_volume, lambda: not self._stopped.is_set())
        except BaseException as exc:  # noqa: BLE001 - raised again in the package's thread by take()
            return exc
        return SpooledDataset(volumes, files)


def until_stopped(batches: Iterator, keep_going: Callable[[], bool]) -> Iterator:
    """`batches`, raising SpoolStopped before the next one once `keep_going()` is False."""
    for batch in batches:
        if not keep_going():
            raise SpoolStopped
        yield batch
