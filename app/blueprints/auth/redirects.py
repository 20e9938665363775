"""Where to go after sign-in: a path on this site, judged as the browser will read it."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

# WHATWG URL parsing drops these wherever they are, before anything else.
_DROPPED_ANYWHERE = re.compile(r"[\t\n\r]")
# ... and trims C0 controls and spaces from both ends.
_TRIMMED = "".join(chr(code) for code in range(0x21))
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x21-\x7e]")


def same_site_path(target: str | None) -> str | None:
    """`target` as the browser would resolve it, if that is a path on this site; otherwise None.

    A browser treats `\\` like `/` and ignores tabs and newlines, so `/\\tevil.example` or
    `/<tab>/evil.example` would lead to another host if passed on as written.
    """
    if not target:
        return None
    path = _DROPPED_ANYWHERE.sub("", target.strip(_TRIMMED)).replace("\\", "/")
    if not path.startswith("/") or path.startswith("//") or _CONTROL.search(path):
        return None
    parts = urlsplit(path)
    if parts.scheme or parts.netloc:
        return None
    # The browser percent-encodes spaces and non-ASCII letters; so does the Location header.
    return _NOT_PRINTABLE_ASCII.sub(lambda match: quote(match.group()), path)
