"""Lists that scale: search, filters, a choice of order and keyset pagination, for every list page.

A list is described once (`ListSpec`: its orders, its filters and the columns its search reads);
`read_request` turns the page's query string into a `ListRequest`, keeping what it understood
and saying what it ignored; `page_of` runs the list's own scoped statement one page at a time.

Keyset pagination: a page ends with the sort key of its last row, and the next page starts
strictly after that key, so rows added or removed meanwhile never repeat or skip a row that
was already behind the reader, and a page costs the same at row 100,000 as at row 1 (each
order has an index that gives its rows in order; see the migration a3c5e7f9b1d2). The key
travels in the URL as an opaque cursor signed with the app's secret: a forged or stale one is
refused and the list starts again from the first page with a message, never an error. The
previous page is read the same way backwards: before the key of the page's first row, in the
reverse order, then turned round ("before" in the URL instead of "after").

Each page also says where it is: "26–50 of 130". Both numbers come from one statement counting
the rows the search and filters match (all of them, and those before the page's first row), each
count stopping at COUNT_LIMIT: counting a million files took 160 ms where reading their page takes
0.1 ms, so past the limit the page says "of more than 10,000" (and, deeper in, that it lies
beyond row 10,000) rather than a number it would pay for on every page.

Search is a case-insensitive "contains" over the list's text columns, with `%`, `_` and `\\`
taken literally (LIKE-escaped). A filter is a choice among values the list names, or a record's
id, a short text or a day read from the URL (its `kind`); what cannot be read is left out with a
notice that says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from flask import current_app
from itsdangerous import BadData, URLSafeSerializer
from sqlalchemy import JSON, ScalarSelect, Select, func, literal, or_, select, tuple_
from sqlalchemy.orm import QueryableAttribute, defer
from sqlalchemy.orm.interfaces import ORMOption
from sqlalchemy.sql.elements import ColumnElement

from app.domain.values.text_rules import database_id
from app.extensions import Model, db

PAGE_SIZE = 25
# The most rows a page counts to say where it is; beyond it, "more than".
COUNT_LIMIT = 10_000
SEARCH_LIMIT = 100
FILTER_TEXT_LIMIT = 80
# The name of each query-string parameter a list page reads, besides its filters.
SEARCH_PARAM, SORT_PARAM, CURSOR_PARAM, BEFORE_PARAM = "q", "sort", "after", "before"
# PostgreSQL text cannot hold NUL, so no name contains one (and a parameter with one is refused).
_UNSEARCHABLE = re.compile("\x00")
_LIKE_SPECIAL = re.compile(r"([\\%_])")
# What a list sorts and searches by: a model's column attribute or an SQL expression over one.
ListColumn = ColumnElement[Any] | QueryableAttribute[Any]

TEXT, MOMENT, NUMBER = "text", "moment", "number"
# A filter's kind besides TEXT (a short text) and NUMBER (a record's id): one of its choices, or a day.
CHOICE, DAY = "choice", "day"


@dataclass(frozen=True)
class SortOrder:
    """One order a list offers: its key expressions (the last one unique, the id) and direction.

    `kinds` names each key's type (TEXT, MOMENT, NUMBER), so a cursor's values are checked
    before they reach a statement.
    """

    label: str
    keys: tuple[ListColumn, ...]
    kinds: tuple[str, ...]
    descending: bool = False


def newest_first(at: ListColumn, id_: ListColumn) -> SortOrder:
    """The order of a list of records newest first: by their time `at`, the later id first at one moment."""
    return SortOrder("Newest first", (at, id_), (MOMENT, NUMBER), descending=True)


def oldest_first(at: ListColumn, id_: ListColumn) -> SortOrder:
    """`newest_first` turned round: the earlier id first at one moment."""
    return SortOrder("Oldest first", (at, id_), (MOMENT, NUMBER))


def recently_changed(updated_at: ListColumn, id_: ListColumn) -> SortOrder:
    """The order of a list of records last changed first."""
    return SortOrder("Recently changed", (updated_at, id_), (MOMENT, NUMBER), descending=True)


def a_to_z(name: ListColumn, id_: ListColumn, label: str = "Name A–Z") -> SortOrder:
    """The order of a list of records by a name, ignoring case; at one name, the earlier id first."""
    return SortOrder(label, (func.lower(name), id_), (TEXT, NUMBER))


@dataclass(frozen=True)
class ListFilter:
    """One filter of a list: a CHOICE among `choices`, a record's id (NUMBER), a TEXT or a DAY."""

    label: str
    choices: Mapping[str, str] = field(default_factory=dict)  # value in the URL → what the person reads
    kind: str = CHOICE


@dataclass(frozen=True)
class ListSpec:
    name: str
    sorts: Mapping[str, SortOrder]  # the first is the default
    filters: Mapping[str, ListFilter]
    search_columns: tuple[ListColumn, ...]
    page_size: int = PAGE_SIZE

    @property
    def default_sort(self) -> str:
        return next(iter(self.sorts))


@dataclass(frozen=True)
class ListRequest:
    """What the person asked of a list, every value checked; `notices` says what was ignored and why."""

    search: str = ""
    filters: Mapping[str, str] = field(default_factory=dict)
    sort: str = ""
    cursor: str | None = None  # the page starts after this key
    notices: tuple[str, ...] = ()
    before: str | None = None  # the page ends before this key (a previous page); unused with `cursor`

    def params(self, **changes: str | None) -> dict[str, str]:
        """The query string of this request (with `changes`), without empty values: for links and forms."""
        values: dict[str, str | None] = {SEARCH_PARAM: self.search, **self.filters, SORT_PARAM: self.sort}
        values[CURSOR_PARAM] = self.cursor
        values[BEFORE_PARAM] = self.before
        values.update(changes)
        return {name: value for name, value in values.items() if value}

    @property
    def is_narrowed(self) -> bool:
        """True when a search or a filter hides some of the list's rows."""
        return bool(self.search or self.filters)

    def number(self, name: str) -> int | None:
        """The id a NUMBER filter holds (read_request checked it), or None when it is not set."""
        value = self.filters.get(name)
        return int(value) if value else None

    def day(self, name: str) -> date | None:
        """The day a DAY filter holds (read_request checked it), or None when it is not set."""
        value = self.filters.get(name)
        return date.fromisoformat(value) if value else None


@dataclass(frozen=True)
class Page:
    """One page of a list: its rows (without the key columns), the cursors of the next and the
    previous page if any, and where it is in the list (`first_number` of `total`, from 1)."""

    rows: list[Any]
    request: ListRequest
    next_cursor: str | None
    notices: tuple[str, ...]
    previous_cursor: str | None = None
    first_number: int = 0
    total: int = 0

    @property
    def position_label(self) -> str:
        """Where the page is: "26–50 of 130"; past the counting limit "26–50 of more than 10,000",
        and deeper in "Beyond row 10,000 of more than 10,000"."""
        place = (
            f"{self.first_number:,}–{self.last_number:,}"
            if self.first_number <= COUNT_LIMIT
            else f"Beyond row {COUNT_LIMIT:,}"
        )
        return f"{place} of {self.total:,}" if self.total <= COUNT_LIMIT else f"{place} of more than {COUNT_LIMIT:,}"

    @property
    def is_first(self) -> bool:
        return self.request.cursor is None and self.request.before is None

    @property
    def last_number(self) -> int:
        return self.first_number + len(self.rows) - 1 if self.rows else 0

    def next_params(self) -> dict[str, str]:
        return self.request.params(**{CURSOR_PARAM: self.next_cursor, BEFORE_PARAM: None})

    def previous_params(self) -> dict[str, str]:
        return self.request.params(**{CURSOR_PARAM: None, BEFORE_PARAM: self.previous_cursor})

    def with_rows(self, rows: list[Any]) -> Page:
        """The same page with its rows as the caller shows them (listings built from the raw rows)."""
        return replace(self, rows=rows)

    def first_params(self) -> dict[str, str]:
        return self.request.params(**{CURSOR_PARAM: None, BEFORE_PARAM: None})


def read_request(spec: ListSpec, args: Mapping[str, str]) -> ListRequest:
    """The list request in `args` (a page's query string), with unknown values ignored and said so."""
    notices: list[str] = []
    search = _bounded_text(args.get(SEARCH_PARAM), SEARCH_LIMIT, "The search", notices) if spec.search_columns else ""
    filters = {}
    for name, list_filter in spec.filters.items():
        value = _filter_value(list_filter, args.get(name) or "", notices)
        if value:
            filters[name] = value
    sort = args.get(SORT_PARAM) or spec.default_sort
    if sort not in spec.sorts:
        notices.append("That order does not exist; the list is in its usual order.")
        sort = spec.default_sort
    cursor = args.get(CURSOR_PARAM) or None
    before = None if cursor else args.get(BEFORE_PARAM) or None
    return ListRequest(search, filters, sort, cursor, tuple(notices), before)


def _bounded_text(raw: str | None, limit: int, what: str, notices: list[str]) -> str:
    """`raw` without NUL characters (no stored text holds one) and cut to `limit`, each change said."""
    text = (raw or "").strip()
    if _UNSEARCHABLE.search(text):
        text = _UNSEARCHABLE.sub("", text).strip()
        notices.append(f"{what} left out NUL characters, which no stored text contains.")
    if len(text) > limit:
        text = text[:limit]
        notices.append(f"{what} used only its first {limit} characters.")
    return text


def _filter_value(list_filter: ListFilter, raw: str, notices: list[str]) -> str:
    """The filter's value in `raw` as the URL writes it, or "" when it is unset or cannot be read (said)."""
    raw = raw.strip()
    if not raw:
        return ""
    ignored = f"{list_filter.label}: "
    if list_filter.kind == TEXT:
        return _bounded_text(raw, FILTER_TEXT_LIMIT, list_filter.label, notices)
    if list_filter.kind == NUMBER:
        record_id = database_id(raw)
        if record_id is not None:
            return str(record_id)
        notices.append(ignored + f"“{raw[:40]}” is not an id, so the list is not filtered by it.")
        return ""
    if list_filter.kind == DAY:
        try:
            return date.fromisoformat(raw).isoformat()
        except ValueError:
            notices.append(ignored + f"“{raw[:40]}” is not a date (YYYY-MM-DD), so the list is not filtered by it.")
            return ""
    if raw in list_filter.choices:
        return raw
    notices.append(ignored + "that choice does not exist, so the list is not filtered by it.")
    return ""


def without_json(model: type[Model]) -> list[ORMOption]:
    """Loader options for a list of `model` records: its JSON columns (a file's request, a
    schedule's timetable…) are left unread, since no list row shows one and decoding them is a
    page's largest cost after rendering; a template that reaches for one raises at once rather
    than quietly loading it with one query per row."""
    return [
        defer(getattr(model, column.key), raiseload=True)
        for column in model.__table__.columns
        if isinstance(column.type, JSON)
    ]


def contains_text(columns: Sequence[ListColumn], search: str) -> ColumnElement[bool]:
    """Any of `columns` contains `search`, ignoring case, with LIKE's wildcards taken literally."""
    pattern = "%" + _LIKE_SPECIAL.sub(r"\\\1", search) + "%"
    return or_(*(column.ilike(pattern, escape="\\") for column in columns))


def page_of(spec: ListSpec, request: ListRequest, statement: Select) -> Page:
    """One page of `statement` (already scoped and filtered by the caller) in the request's order.

    The statement gets the search, the order, the cursor's position and a limit of one row more
    than a page, which tells whether there is a further page in the direction read. A previous
    page with nothing before it is the first page, read again from the top so that it is whole.
    """
    order = spec.sorts[request.sort]
    notices = list(request.notices)
    searched = statement.where(contains_text(spec.search_columns, request.search)) if request.search else statement
    backwards = request.before is not None
    position = _decoded_cursor(spec, request.sort, request.before if backwards else request.cursor, order)
    if (request.cursor is not None or backwards) and position is None:
        notices.append("That page link is not valid (or no longer), so the list starts again from the first page.")
        request = replace(request, cursor=None, before=None, notices=request.notices)
        backwards = False
    # Reading backwards walks the reverse order.
    descending = order.descending != backwards
    paged = searched
    if position is not None:
        bound = _bound(order, position)
        paged = paged.where(tuple_(*order.keys) < bound if descending else tuple_(*order.keys) > bound)
    key_count = len(order.keys)
    paged = (
        paged.add_columns(*(key.label(f"list_key_{index}") for index, key in enumerate(order.keys)))
        .order_by(None)
        .order_by(*(key.desc() if descending else key.asc() for key in order.keys))
        .limit(spec.page_size + 1)
    )
    rows = list(db.session.execute(paged).all())
    further = len(rows) > spec.page_size
    rows = rows[: spec.page_size]
    if backwards:
        if not further:
            return page_of(spec, replace(request, before=None, notices=tuple(notices)), statement)
        rows.reverse()
    keys_of = [tuple(row[-key_count:]) for row in rows]
    # A previous page always has the row it was read before after it; a forward page knows from its extra row.
    has_next = bool(rows) and (backwards or further)
    next_cursor = encoded_cursor(spec, request.sort, keys_of[-1]) if has_next else None
    total, earlier = _position(searched, order, keys_of[0] if rows else None)
    previous_cursor = encoded_cursor(spec, request.sort, keys_of[0]) if rows and earlier else None
    return Page(
        [tuple(row[:-key_count]) for row in rows],
        request,
        next_cursor,
        tuple(notices),
        previous_cursor=previous_cursor,
        first_number=earlier + 1 if rows else 0,
        total=total,
    )


def _bound(order: SortOrder, values: tuple) -> Any:
    return tuple_(*(literal(value, type_=key.type) for key, value in zip(order.keys, values, strict=True)))


def _position(searched: Select, order: SortOrder, first_key: tuple | None) -> tuple[int, int]:
    """How many rows the search and filters match, and how many of them come before `first_key` in
    the order, each counted up to COUNT_LIMIT + 1, in one statement (keys labelled, so the
    comparison reads the subquery's)."""
    rows = (
        searched.add_columns(*(key.label(f"list_key_{index}") for index, key in enumerate(order.keys)))
        .order_by(None)
        .subquery()
    )
    counted = [_bounded_count(select(literal(1)).select_from(rows))]
    if first_key is not None:
        keys = tuple_(*(rows.c[f"list_key_{index}"] for index in range(len(order.keys))))
        bound = _bound(order, first_key)
        counted.append(
            _bounded_count(
                select(literal(1)).select_from(rows).where(keys > bound if order.descending else keys < bound)
            )
        )
    found = db.session.execute(select(*counted)).one()
    return found[0], found[1] if first_key is not None else 0


def _bounded_count(rows: Select) -> ScalarSelect[int]:
    """How many rows `rows` gives, counted no further than COUNT_LIMIT + 1."""
    return select(func.count()).select_from(rows.limit(COUNT_LIMIT + 1).subquery()).scalar_subquery()


def _serializer(spec: ListSpec) -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt=f"list-cursor:{spec.name}")


def encoded_cursor(spec: ListSpec, sort: str, values: tuple) -> str:
    """The cursor of the page that starts after the row whose key in the order `sort` is `values`."""
    order = spec.sorts[sort]
    encoded = [value.isoformat() if kind == MOMENT else value for kind, value in zip(order.kinds, values, strict=True)]
    return _serializer(spec).dumps([sort, encoded])


def _decoded_cursor(spec: ListSpec, request_sort: str, cursor: str | None, order: SortOrder) -> tuple | None:
    """The key values in `cursor`, or None when there is none or it is not one of ours for this
    list and this order (forged, mangled, from another list, or from another order)."""
    if cursor is None:
        return None
    try:
        sort, values = _serializer(spec).loads(cursor)
    except (BadData, TypeError, ValueError):
        return None
    if sort != request_sort or not isinstance(values, list) or len(values) != len(order.kinds):
        return None
    decoded = []
    for kind, value in zip(order.kinds, values, strict=True):
        checked = _checked_value(kind, value)
        if checked is None:
            return None
        decoded.append(checked)
    return tuple(decoded)


def _checked_value(kind: str, value: object) -> object | None:
    if kind == TEXT:
        return value if isinstance(value, str) else None
    if kind == NUMBER:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
