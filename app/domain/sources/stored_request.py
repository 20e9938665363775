"""The request an export file keeps: a saved query substituted on the day it was asked for.

Admission builds it (app/domain/sources/query_spec.substitute) and stores its JSON in
`query_exports.request`; production reads it back with `FileRequest.from_json` and the query
runner selects by it. The JSON shape is the one files have always been stored in:

    {"dataset": "timesheet_entries", "columns": ["id", "hours"],
     "filters": [{"column": "hours", "op": "gt", "value": "7.5"}],
     "sort": [{"column": "id", "direction": "asc"}], "row_limit": 100,
     "parameters_applied": [{"column": "work_date", "range": "last_7_days",
                             "from": "2026-11-04", "to": "2026-11-10"}]}

Values are in query_spec's normal form (ISO dates and times, decimals as text, integers);
`from_json` checks the shape only: whether the dataset, columns and operators still fit the
catalog is the query runner's check, when the rows are read.

A file of the workspace's audit log keeps the audit page's filters instead (`AuditSelection`):

    {"action": "schedule.paused", "actor_id": 7, "since": "2026-11-01", "until": null}
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from app.domain.sources.stored_shape import StoredShape

_SHAPE = StoredShape("request")
SORT_DIRECTIONS = ("asc", "desc")

Scalar = str | int | float | None
FilterValue = Scalar | tuple[Scalar, ...]


def _scalar(value: Any, path: str) -> Scalar:
    if value is None or (isinstance(value, str | int | float) and not isinstance(value, bool)):
        return value
    raise _SHAPE.refuse(path, "text, a number or null")


@dataclass(frozen=True)
class Filter:
    """One condition on a column; `value` is None for operators without one, a tuple for `between` and `in`."""

    column: str
    op: str
    value: FilterValue = None

    @classmethod
    def from_json(cls, data: Any, path: str = "filter") -> Filter:
        data = _SHAPE.mapping(data, path, ("column", "op"), ("value",))
        raw = data.get("value")
        if isinstance(raw, list | tuple):
            value: FilterValue = tuple(_scalar(item, f"{path}.value[{i}]") for i, item in enumerate(raw))
        else:
            value = _scalar(raw, f"{path}.value")
        return cls(_SHAPE.text(data["column"], f"{path}.column"), _SHAPE.text(data["op"], f"{path}.op"), value)

    def to_json(self) -> dict[str, Any]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"column": self.column, "op": self.op, "value": value}


@dataclass(frozen=True)
class SortKey:
    column: str
    direction: str = "asc"

    @property
    def descending(self) -> bool:
        return self.direction == "desc"

    @classmethod
    def from_json(cls, data: Any, path: str = "sort key") -> SortKey:
        data = _SHAPE.mapping(data, path, ("column",), ("direction",))
        direction = _SHAPE.choice(data.get("direction", "asc"), f"{path}.direction", SORT_DIRECTIONS)
        return cls(_SHAPE.text(data["column"], f"{path}.column"), direction)

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "direction": self.direction}


@dataclass(frozen=True)
class AppliedRange:
    """A relative date range of the saved query as it was worked out: its first and last day (ISO)."""

    column: str
    range: str
    first: str
    last: str

    @classmethod
    def from_json(cls, data: Any, path: str = "applied range") -> AppliedRange:
        data = _SHAPE.mapping(data, path, ("column", "range", "from", "to"))
        return cls(
            _SHAPE.text(data["column"], f"{path}.column"),
            _SHAPE.text(data["range"], f"{path}.range"),
            _SHAPE.text(data["from"], f"{path}.from"),
            _SHAPE.text(data["to"], f"{path}.to"),
        )

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "range": self.range, "from": self.first, "to": self.last}


@dataclass(frozen=True)
class FileRequest:
    """What a file's rows are: dataset, columns in order, filters, sort and row limit."""

    dataset: str
    columns: tuple[str, ...]
    filters: tuple[Filter, ...] = ()
    sort: tuple[SortKey, ...] = ()
    row_limit: int | None = None
    parameters_applied: tuple[AppliedRange, ...] = ()

    @classmethod
    def from_json(cls, data: Any) -> FileRequest:
        """The request stored as `data`, or ValidationError naming what is not in its shape."""
        data = _SHAPE.mapping(
            data, "request", ("dataset", "columns"), ("filters", "sort", "row_limit", "parameters_applied")
        )
        return cls(
            dataset=_SHAPE.text(data["dataset"], "dataset"),
            columns=_SHAPE.texts(data["columns"], "columns"),
            filters=_SHAPE.each(data.get("filters"), "filters", Filter.from_json),
            sort=_SHAPE.each(data.get("sort"), "sort", SortKey.from_json),
            row_limit=_SHAPE.optional_whole_number(data.get("row_limit"), "row_limit", 1),
            parameters_applied=_SHAPE.each(
                data.get("parameters_applied"), "parameters_applied", AppliedRange.from_json
            ),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "columns": list(self.columns),
            "filters": [f.to_json() for f in self.filters],
            "sort": [s.to_json() for s in self.sort],
            "row_limit": self.row_limit,
            "parameters_applied": [p.to_json() for p in self.parameters_applied],
        }


@dataclass(frozen=True)
class AuditSelection:
    """Which of a workspace's audit events a file of its audit log holds: one action, one person's
    actions, and the UTC days from `since` to `until` (each None when not filtered)."""

    action: str | None = None
    actor_id: int | None = None
    since: date | None = None
    until: date | None = None

    @classmethod
    def from_json(cls, data: Any) -> AuditSelection:
        """The selection stored as `data`, or ValidationError naming what is not in its shape."""
        data = _SHAPE.mapping(data, "request", (), ("action", "actor_id", "since", "until"))
        return cls(
            action=_SHAPE.optional_text(data.get("action"), "action"),
            actor_id=_SHAPE.optional_whole_number(data.get("actor_id"), "actor_id", 1),
            since=_optional_day(data.get("since"), "since"),
            until=_optional_day(data.get("until"), "until"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "actor_id": self.actor_id,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
        }


def _optional_day(value: Any, path: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(_SHAPE.text(value, path))
    except ValueError:
        raise _SHAPE.refuse(path, "a date (YYYY-MM-DD)") from None
