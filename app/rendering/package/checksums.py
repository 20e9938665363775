"""`SHA256SUMS`: each volume's SHA-256 in the format `sha256sum -c` reads, so a customer checks a
downloaded or delivered package with the tools already on their machine.

One line per volume: the lower-case hex digest, two spaces (text mode, as `sha256sum` writes
it), the volume's path relative to the package folder, `\\n`. GNU `sha256sum` escapes a name
holding a backslash or a line break; package keys never hold either (app/services/workspace_export/package_keys.py),
and a name that did is refused here rather than written in a form the tool misreads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def build_checksums(volumes: Iterable[tuple[str, str]]) -> bytes:
    """The file's bytes for (path relative to the package, SHA-256 hex digest) pairs, in order."""
    lines = []
    for path, sha256 in volumes:
        if not _DIGEST.match(sha256):
            raise ValueError(f"{sha256!r} is not a SHA-256 hex digest")
        if not path or any(character in path for character in "\\\n\r") or path.startswith("/"):
            raise ValueError(f"{path!r} cannot be written as a relative path in SHA256SUMS")
        lines.append(f"{sha256}  {path}\n")
    return "".join(lines).encode("utf-8")
