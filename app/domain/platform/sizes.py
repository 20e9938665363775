"""How a size in bytes is written for people: the same on pages, in emails and on error pages."""

from __future__ import annotations

_UNITS = (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10))


def size_label(size_bytes: int) -> str:
    """'1.5 MB', '2.0 KB', '812 bytes': binary steps, one decimal, thousands separated."""
    for unit, step in _UNITS:
        if size_bytes >= step:
            return f"{size_bytes / step:,.1f} {unit}"
    return f"{size_bytes:,} bytes"
