"""How a length of time is written for people: the same on pages and in the sentences of services."""

from __future__ import annotations


def duration_label(seconds: int) -> str:
    """'45 s', '3 min 5 s', '2 h 10 min'."""
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
