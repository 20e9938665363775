"""Keyset pagination: a page is the rows after a cursor in a fixed (time, id) order, newest first.

Unlike OFFSET, the cost of a page does not grow with how deep it is, and rows added while a
person pages do not shift later pages. The cursor in the URL is opaque and checked: anything
that is not a cursor this module made reads as "the first page".
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Select, and_, or_
from sqlalchemy.orm import InstrumentedAttribute

PAGE_SIZE = 50


@dataclass(frozen=True)
class Cursor:
    at: datetime
    id: int

    def encode(self) -> str:
        raw = f"{self.at.astimezone(UTC).isoformat()}|{self.id}".encode("ascii")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str | None) -> Cursor | None:
        """The cursor `text` names, or None for anything else (missing, damaged or forged)."""
        if not text or len(text) > 100:
            return None
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
            at_text, id_text = raw.split("|")
            at = datetime.fromisoformat(at_text)
            row_id = int(id_text)
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return None
        if at.tzinfo is None or not 0 < row_id < 2**63:
            return None
        return cls(at.astimezone(UTC), row_id)


@dataclass(frozen=True)
class Page:
    rows: Sequence[Any]
    next_cursor: str | None


def newest_first(
    statement: Select,
    at: InstrumentedAttribute,
    id_: InstrumentedAttribute,
    cursor: Cursor | None,
    size: int = PAGE_SIZE,
) -> Select:
    """`statement` ordered newest first by (at, id), after `cursor`, one row more than a page
    (that row says whether another page follows)."""
    if cursor is not None:
        statement = statement.where(or_(at < cursor.at, and_(at == cursor.at, id_ < cursor.id)))
    return statement.order_by(at.desc(), id_.desc()).limit(size + 1)


def page_of(rows: Sequence[Any], key_of: Callable[[Any], tuple[datetime, int]], size: int = PAGE_SIZE) -> Page:
    """The page in `rows` (fetched with `newest_first`) and the cursor of the next, if any;
    `key_of` gives a row's (time, id)."""
    if len(rows) <= size:
        return Page(rows, None)
    return Page(rows[:size], Cursor(*key_of(rows[size - 1])).encode())


def day_filter(args, name: str, label: str, problems: list[str]) -> date | None:
    """A date filter of a list's URL (YYYY-MM-DD); anything else is named in `problems` and ignored."""
    raw = (args.get(name) or "").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        problems.append(f"The {label} date “{raw[:40]}” is not a date (YYYY-MM-DD); it is ignored.")
        return None


def day_start(day: date) -> datetime:
    """Midnight UTC at the start of `day`, for a "from" bound; a "to" bound is the next day's."""
    return datetime.combine(day, time.min, tzinfo=UTC)


def day_after(day: date) -> datetime:
    return day_start(day + timedelta(days=1))
