"""How a size in bytes is written for people: the same on pages, in emails and on error pages."""

from __future__ import annotations

import math

_UNITS = (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10))


def size_label(size_bytes: int, *, round_up: bool = False) -> str:
    """'1.5 MB', '2.0 KB', '812 bytes': binary steps, one decimal, thousands separated.

    `round_up` for a size stated against a limit: the label is never smaller than the size, so a
    size just over a limit never reads as equal to it.
    """
    for unit, step in _UNITS:
        if size_bytes >= step:
            amount = math.ceil(size_bytes * 10 / step) / 10 if round_up else size_bytes / step
            return f"{amount:,.1f} {unit}"
    return f"{size_bytes:,} bytes"
