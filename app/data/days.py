"""Whole days as bounds on a time column: a list's "from" and "to" dates, read as UTC days."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.orm import QueryableAttribute


def within_days(
    column: ColumnElement[Any] | QueryableAttribute[Any], since: date | None, until: date | None
) -> list[ColumnElement[bool]]:
    """Conditions keeping `column` from midnight UTC at the start of `since` to the end of `until`,
    both days included; an unset bound leaves that side open."""
    conditions = []
    if since is not None:
        conditions.append(column >= _midnight(since))
    if until is not None:
        conditions.append(column < _midnight(until + timedelta(days=1)))
    return conditions


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)
