"""Writing a whole file so that no reader ever sees part of it: the directory storage backend's
objects and a directory destination's objects are both written this way.

The bytes go to a temporary file beside the target, are synced to the disk, and the temporary
file is renamed over the target: a reader, or a process that starts after a crash, finds the old
file or the whole new one, never a part at the target's name. Temporary names carry a `~`, which
no storage key may contain (`app.storage.base.check_key`), so a listing of keys never returns one.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterable
from pathlib import Path


def write_atomically(target: Path, chunks: Iterable[bytes]) -> int:
    """Write `chunks` as the whole content of `target`, replacing what stood there; returns the
    number of bytes written. The target's folder must exist.

    Whatever stops the write (the system refusing it, `chunks` raising, an interrupt) removes the
    temporary file and is raised as it came, and the target keeps its old content.
    """
    # Beside the target: a rename within one folder stays on one file system, so it is atomic.
    temporary = target.parent / f".~{uuid.uuid4().hex}.tmp"
    size = 0
    try:
        with open(temporary, "xb") as out:
            for chunk in chunks:
                out.write(chunk)
                size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    return size
