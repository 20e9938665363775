"""How fast rows are being written and how long the rest will take, at the rate seen so far:
one rule for a file's progress and a workspace export's."""

from __future__ import annotations

from datetime import datetime


def rows_per_second(written: int, started_at: datetime | None, now: datetime) -> float | None:
    """Rows written per second since `started_at`; None before a row or a second has passed."""
    if not written or started_at is None:
        return None
    elapsed = (now - started_at).total_seconds()
    return written / elapsed if elapsed > 0 else None


def seconds_left(written: int, total: int | None, started_at: datetime | None, now: datetime) -> int | None:
    """Seconds until `total` rows are written at the rate seen so far; None while it cannot be told."""
    rate = rows_per_second(written, started_at, now)
    if rate is None or not total:
        return None
    return int(max(total - written, 0) / rate)
