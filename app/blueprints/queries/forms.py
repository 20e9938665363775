"""The query builder form: what the person typed, read from the request and shown back.

The builder has rows that come and go (filters, date ranges), so it is plain data rather than
a WTForms form. It never validates: app.domain.sources.query_spec does, and a refused save shows the
form exactly as it was typed. Field names are flat (`filters-0-column`), so the page works as
an ordinary form without JavaScript and htmx only re-renders parts of it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import ClassVar

from werkzeug.datastructures import MultiDict

from app.domain.sources.catalog import Column, Dataset, get_dataset
from app.domain.sources.query_spec import MAX_FILTERS, MAX_SORT, OPERATORS, VALUELESS
from app.domain.values.text_rules import opened_version
from app.models import SavedQuery

# Beyond the limits query_spec enforces, one extra row is read so its message can be shown.
MAX_FILTER_ROWS = MAX_FILTERS + 1
MAX_SORT_ROWS = MAX_SORT + 1
MAX_PARAMETER_ROWS = 5
DEFAULT_RANGE = "last_7_days"


@dataclass
class FilterRow:
    column: str = ""
    op: str = ""
    value: str = ""
    # The values ticked in the list an "is one of" filter offers (`filters-N-picked`), each exactly
    # as offered; when there are some, they are the filter's value instead of the typed text.
    # The page sends each as a JSON string (see `picked_value`).
    picked: list[str] = field(default_factory=list)

    def definition_value(self) -> str | list[str]:
        return list(self.picked) if self.op == "in" and self.picked else self.value


@dataclass
class SortRow:
    column: str = ""
    direction: str = "asc"


@dataclass
class ParameterRow:
    column: str = ""
    range: str = ""


@dataclass
class QueryForm:
    name: str = ""
    dataset: str = ""
    columns: list[str] = field(default_factory=list)
    # Every column in the order the list shows them; the chosen ones are exported in this order.
    column_order: list[str] = field(default_factory=list)
    filters: list[FilterRow] = field(default_factory=list)
    sort: list[SortRow] = field(default_factory=list)
    parameters: list[ParameterRow] = field(default_factory=list)
    row_limit: str = ""
    version: str = ""
    # Ids of builder controls that focus returns to (a row's controls take its fields' names).
    DATASET_CONTROL: ClassVar[str] = "dataset"
    ADD_FILTER_CONTROL: ClassVar[str] = "add-filter"
    ADD_PARAMETER_CONTROL: ClassVar[str] = "add-parameter"

    @classmethod
    def blank(cls, dataset: str) -> QueryForm:
        return cls(dataset=dataset)

    @classmethod
    def from_query(cls, query: SavedQuery) -> QueryForm:
        return cls(
            name=query.name,
            dataset=query.dataset,
            columns=list(query.columns),
            column_order=list(query.columns),
            filters=[FilterRow(f["column"], f["op"], _value_text(f.get("value")), _picked(f)) for f in query.filters],
            sort=[SortRow(s["column"], s["direction"]) for s in query.sort],
            parameters=[ParameterRow(p["column"], p["range"]) for p in query.parameters],
            row_limit="" if query.row_limit is None else str(query.row_limit),
            version=str(query.version),
        )

    @classmethod
    def from_request(cls, form: MultiDict) -> QueryForm:
        posted = form.getlist("columns")
        order = form.getlist("column_order")
        rank = {name: i for i, name in enumerate(order)}
        # Stable sort: columns the order list does not know keep the order they were sent in.
        columns = sorted(posted, key=lambda name: rank.get(name, len(order)))
        return cls(
            name=form.get("name", ""),
            dataset=form.get("dataset", ""),
            columns=columns,
            column_order=order,
            filters=[
                FilterRow(
                    _text(row.get("column")), _text(row.get("op")), _text(row.get("value")), _list(row.get("picked"))
                )
                for row in _rows(form, "filters", MAX_FILTER_ROWS)
            ],
            sort=[
                SortRow(_text(row.get("column")), _text(row.get("direction", "asc")))
                for row in _rows(form, "sort", MAX_SORT_ROWS)
                if row.get("column")
            ],
            parameters=[
                ParameterRow(_text(row.get("column")), _text(row.get("range")))
                for row in _rows(form, "parameters", MAX_PARAMETER_ROWS)
            ],
            row_limit=form.get("row_limit", ""),
            version=form.get("version", ""),
        )

    def definition(self) -> dict:
        """The definition as typed, for query_spec.validate_definition to judge."""
        return {
            "dataset": self.dataset,
            "columns": list(self.columns),
            "filters": [{"column": f.column, "op": f.op, "value": f.definition_value()} for f in self.filters],
            "sort": [{"column": s.column, "direction": s.direction} for s in self.sort],
            "parameters": [{"column": p.column, "range": p.range} for p in self.parameters],
            "row_limit": self.row_limit.strip(),
        }

    @property
    def expected_version(self) -> int | None:
        return opened_version(self.version)

    # --- What the builder shows -------------------------------------------------------------

    def dataset_object(self) -> Dataset | None:
        return get_dataset(self.dataset)

    def ordered_columns(self) -> list[Column]:
        """The dataset's columns: chosen ones first in their order, then the rest as listed."""
        dataset = self.dataset_object()
        if dataset is None:
            return []
        order = [name for name in self.column_order if dataset.column(name)]
        chosen = [name for name in self.columns if dataset.column(name)]
        ranked = [n for n in order if n in chosen] + [n for n in chosen if n not in order]
        rest = [n for n in order if n not in chosen] + [n for n in dataset.column_names if n not in order]
        names = list(dict.fromkeys(ranked + rest))
        return [c for c in (dataset.column(name) for name in names) if c is not None]

    def sort_rows(self) -> list[SortRow]:
        """The chosen sort keys and empty rows up to the limit."""
        return self.sort + [SortRow() for _ in range(MAX_SORT - len(self.sort))]

    # --- Builder actions (add or remove a row, move a column, switch dataset) -------------------

    def apply(self, action: str) -> str | None:
        """Change the form as a builder button asks; unknown actions only re-render.

        Returns the id of the control focus belongs on once the builder is drawn again: the
        pressed control's replacement (the moved column's button, the new row's first field, the
        row that took a removed one's place), so a keyboard user goes on where they were. None
        when the pressed control itself is drawn again under its own id.
        """
        verb, _, argument = action.partition(":")
        focus: str | None = None
        if verb == "dataset":
            self.columns, self.column_order, self.filters, self.sort, self.parameters = [], [], [], [], []
            focus = self.DATASET_CONTROL
        elif verb == "add_filter":
            self._add_filter()
            focus = _row_control("filters", len(self.filters), None, self.ADD_FILTER_CONTROL)
        elif verb == "remove_filter":
            removed = _remove(self.filters, argument)
            focus = _row_control("filters", len(self.filters), removed, self.ADD_FILTER_CONTROL)
        elif verb == "add_parameter":
            self._add_parameter()
            focus = _row_control("parameters", len(self.parameters), None, self.ADD_PARAMETER_CONTROL)
        elif verb == "remove_parameter":
            removed = _remove(self.parameters, argument)
            focus = _row_control("parameters", len(self.parameters), removed, self.ADD_PARAMETER_CONTROL)
        elif verb in ("up", "down"):
            self._move(argument, -1 if verb == "up" else 1)
            focus = self._move_control(argument, verb)
        self._fit_operators()
        return focus

    def _add_filter(self) -> None:
        dataset = self.dataset_object()
        if dataset is None or len(self.filters) >= MAX_FILTERS:
            return
        first = dataset.columns[0]
        self.filters.append(FilterRow(first.name, next(iter(OPERATORS[first.type])), ""))

    def _add_parameter(self) -> None:
        dates = self.date_columns()
        if dates and len(self.parameters) < MAX_PARAMETER_ROWS:
            self.parameters.append(ParameterRow(dates[0].name, DEFAULT_RANGE))

    def date_columns(self) -> list[Column]:
        dataset = self.dataset_object()
        return [c for c in dataset.columns if c.type in ("date", "datetime")] if dataset else []

    def _move(self, name: str, step: int) -> None:
        names = [c.name for c in self.ordered_columns()]
        if name not in names:
            return
        i = names.index(name)
        j = i + step
        if 0 <= j < len(names):
            names[i], names[j] = names[j], names[i]
        self.column_order = names
        self.columns = [n for n in names if n in self.columns]

    def _move_control(self, name: str, direction: str) -> str | None:
        """The moved column's button that still moves it the same way, else the other way (it
        reached an end), else its tick box (it is the only column chosen)."""
        chosen = [c.name for c in self.ordered_columns() if c.name in self.columns]
        if name not in chosen:
            return None
        position = chosen.index(name)
        can_move = {"up": position > 0, "down": position < len(chosen) - 1}
        other = "down" if direction == "up" else "up"
        for way in (direction, other):
            if can_move[way]:
                return self.move_control(name, way)
        return self.column_control(name)

    @staticmethod
    def column_control(name: str) -> str:
        """The id of a column's tick box."""
        return f"column-{name}"

    @staticmethod
    def move_control(name: str, direction: str) -> str:
        """The id of a column's "Move up" or "Move down" button."""
        return f"move-{direction}-{name}"

    def _fit_operators(self) -> None:
        """After a filter's column changed, offer an operator its type has."""
        dataset = self.dataset_object()
        if dataset is None:
            return
        for row in self.filters:
            column = dataset.column(row.column)
            if column is not None and row.op not in OPERATORS[column.type]:
                row.op = next(iter(OPERATORS[column.type]))
            if row.op in VALUELESS:
                row.value = ""
            if row.op != "in":
                row.picked = []


def _value_text(value: object) -> str:
    """A stored filter value as the person would type it: lists comma-separated."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _picked(stored: dict) -> list[str]:
    value = stored.get("value")
    return [str(v) for v in value] if stored.get("op") == "in" and isinstance(value, list | tuple) else []


_ROW_FIELD = re.compile(r"^(?P<prefix>[a-z]+)-(?P<index>[0-9]{1,4})-(?P<field>[a-z_]+)$")
# Row fields a list sends several values for (a multiple select); the others send one.
_LIST_FIELDS = {"picked"}


def _rows(form: MultiDict, prefix: str, limit: int) -> list[dict[str, str | list[str]]]:
    """Rows posted as `prefix-N-field`, in the order of N, at most `limit` of them."""
    rows: dict[int, dict[str, str | list[str]]] = {}
    for key in form:
        match = _ROW_FIELD.match(key)
        if match and match["prefix"] == prefix:
            name = match["field"]
            rows.setdefault(int(match["index"]), {})[name] = (
                form.getlist(key) if name in _LIST_FIELDS else form.get(key, "")
            )
    return [rows[i] for i in sorted(rows)[:limit]]


def _text(posted: str | list[str] | None) -> str:
    return posted if isinstance(posted, str) else ""


def _list(posted: str | list[str] | None) -> list[str]:
    return [picked_value(item) for item in posted] if isinstance(posted, list) else []


def picked_value(posted: str) -> str:
    """A value picked from the list, as the option sent it: a JSON string, because a form turns a
    line break inside a value into CR LF and the value would no longer be the one stored. Text
    that is not a JSON string (typed by hand) is taken as it is."""
    try:
        value = json.loads(posted)
    except ValueError:
        return posted
    return value if isinstance(value, str) else posted


def _remove(rows: list, index: str) -> int | None:
    """Remove row `index`; the index it had, or None when there is no such row."""
    if re.fullmatch("[0-9]{1,4}", index) and int(index) < len(rows):
        del rows[int(index)]
        return int(index)
    return None


def _row_control(prefix: str, count: int, removed: int | None, add_control: str) -> str:
    """Where focus goes after a row of `prefix` ("filters", "parameters") was added (removed
    None) or removed: the first field of the row now at the removed one's place, else of the
    last row (the new one, or the one before the removed), else the button that adds a row."""
    if count == 0:
        return add_control
    index = removed if removed is not None and removed < count else count - 1
    return f"{prefix}-{index}-column"
