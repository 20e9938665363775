"""Rows read one step ahead in a thread of their own, while the caller writes the last ones.

A Parquet package's batches are decoded by the database driver in native code and written by
pyarrow in native code, both without Python's GIL: in one thread each waits for the other, in
two they overlap on a machine's two cores (bench/README.md, "After issue 31"). The iterator is
advanced, and closed, only in the reading thread, so a driver's connection is used by one thread
alone; at most `ahead` items wait between the two, so memory holds that many batches more.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from typing import TypeVar, cast

Item = TypeVar("Item")

# How often a reading thread that has an item ready looks whether the caller has gone.
_STOP_POLL_SECONDS = 0.1
_END = object()


def read_ahead(items: Iterator[Item], name: str, ahead: int) -> Generator[Item, None, None]:
    """The items of `items`, in order, read in a thread named `name` up to `ahead` items ahead of
    the caller (and one more in hand, waiting for room).

    A failure while reading is raised to the caller at the item where it happened. Closing this
    generator (or leaving it by an exception) stops the thread and closes `items` there."""
    handed: queue.Queue[tuple[object, BaseException | None]] = queue.Queue(maxsize=ahead)
    stopped = threading.Event()

    def offer(entry: tuple[object, BaseException | None]) -> bool:
        while not stopped.is_set():
            try:
                handed.put(entry, timeout=_STOP_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        failure: BaseException | None = None
        try:
            for item in items:
                if not offer((item, None)):
                    break
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            failure = exc
        try:
            close = getattr(items, "close", None)
            if close is not None:
                close()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            failure = failure or exc
        offer((_END, failure))

    reader = threading.Thread(target=read, name=name, daemon=True)
    reader.start()
    try:
        while True:
            item, failure = handed.get()
            if item is _END:
                if failure is not None:
                    raise failure
                return
            yield cast(Item, item)
    finally:
        stopped.set()
        reader.join()
