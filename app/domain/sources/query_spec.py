"""Saved-query definitions: validation against the catalog, and parameter substitution.

A definition is plain data (dataset, columns, filters, sort, parameters, row_limit). It is
validated here before it is saved, and substituted at file admission: relative parameters
such as "last 7 days" become concrete filters, and that substituted request (a FileRequest,
app/domain/sources/stored_request.py) is what the file keeps and what the worker runs.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation

from app.domain.errors import ValidationError
from app.domain.sources.catalog import Column, Dataset, get_dataset
from app.domain.sources.stored_request import AppliedRange, FileRequest, Filter, SortKey
from app.domain.values.text_rules import DATABASE_INTEGER_MAX, DATABASE_INTEGER_MIN, refuse_unstorable, whole_number

MAX_COLUMNS = 60
MAX_FILTERS = 20
MAX_SORT = 3
MAX_TEXT_VALUE = 500

OPERATORS: dict[str, dict[str, str]] = {
    "text": {
        # First: the condition a new text filter starts with.
        "ieq": "is (any case)",
        "eq": "is exactly (same case)",
        "ne": "is not",
        "contains": "contains",
        "starts_with": "starts with",
        "in": "is one of (comma-separated)",
        "is_empty": "is empty",
        "not_empty": "is not empty",
    },
    "integer": {"eq": "=", "ne": "≠", "lt": "<", "le": "≤", "gt": ">", "ge": "≥", "between": "between"},
    "decimal": {"eq": "=", "ne": "≠", "lt": "<", "le": "≤", "gt": ">", "ge": "≥", "between": "between"},
    "date": {
        "eq": "on",
        "lt": "before",
        "gt": "after",
        "le": "on or before",
        "ge": "on or after",
        "between": "between",
    },
    "datetime": {"lt": "before", "gt": "after", "le": "at or before", "ge": "at or after", "between": "between"},
    "boolean": {"is_true": "is yes", "is_false": "is no"},
}
VALUELESS = {"is_empty", "not_empty", "is_true", "is_false"}


def operator_phrase(column_type: str, op: str) -> str:
    """A condition as a sentence about a filter says it ("Status is exactly pending"): the
    builder's choice without its hint in brackets, which is for choosing, not for reading."""
    return OPERATORS.get(column_type, {}).get(op, op).split(" (", 1)[0]


# Text conditions that compare with the value typed; an empty one would compare with nothing.
TEXT_COMPARISONS = {"ieq", "eq", "ne", "contains", "starts_with"}
# Decimal() also reads "٣.5", "1_0" and "NaN"; a filter value is written in ASCII digits.
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,4})?")

KNOWN_OPERATORS = frozenset(op for labels in OPERATORS.values() for op in labels)

RELATIVE_RANGES = {
    "today": "Today",
    "yesterday": "Yesterday",
    "last_7_days": "Last 7 days",
    "last_30_days": "Last 30 days",
    "this_week": "This week (Monday to today)",
    "last_week": "Last week (Monday to Sunday)",
    "this_month": "This month",
    "last_month": "Last month",
    "this_year": "This year",
}


def _parse_scalar(column: Column, raw: object, field: str) -> object:
    """One filter value, parsed for its column type into a JSON-safe normal form."""
    text = str(raw).strip() if raw is not None else ""
    label = column.label
    if column.type == "text":
        if len(text) > MAX_TEXT_VALUE:
            raise ValidationError(f"The value for “{label}” is longer than {MAX_TEXT_VALUE} characters.", field)
        return str(raw) if raw is not None else ""
    if not text:
        raise ValidationError(f"Enter a value for “{label}”.", field)
    if column.type == "integer":
        # The catalog's whole-number columns are the database's `integer`: a value beyond its
        # range could match no row, and PostgreSQL refuses to compare with it at all.
        return whole_number(
            text,
            field,
            _not_a(column, text),
            DATABASE_INTEGER_MIN,
            DATABASE_INTEGER_MAX,
            f"“{text[:40]}” is outside the range of “{label}”: whole numbers from "
            f"{DATABASE_INTEGER_MIN:,} to {DATABASE_INTEGER_MAX:,}.",
        )
    try:
        if column.type == "decimal":
            if not _DECIMAL.fullmatch(text):
                raise InvalidOperation
            number = Decimal(text)
            if not number.is_finite() or abs(number) > Decimal("1e12"):
                raise InvalidOperation
            return str(number)
        if column.type == "date":
            return date.fromisoformat(text).isoformat()
        if column.type == "datetime":
            moment = text if ("T" in text or " " in text) else text + "T00:00"
            return datetime.fromisoformat(moment).replace(tzinfo=None).isoformat()
    except (ValueError, InvalidOperation):
        pass
    raise ValidationError(_not_a(column, text), field)


def _not_a(column: Column, text: str) -> str:
    expected = {
        "integer": "a whole number",
        "decimal": "a number",
        "date": "a date as YYYY-MM-DD",
        "datetime": "a date and time as YYYY-MM-DD HH:MM",
    }[column.type]
    return f"“{text[:40]}” is not {expected} (column “{column.label}”)."


def _validate_filter(dataset: Dataset, raw: dict, index: int, saving: bool) -> dict:
    field = f"filters-{index}"
    column = dataset.column(str(raw.get("column", "")))
    if column is None:
        raise ValidationError(f"Filter {index + 1}: unknown column “{raw.get('column', '')}”.", field)
    op = str(raw.get("op", ""))
    if op not in OPERATORS[column.type]:
        if op in KNOWN_OPERATORS:
            raise ValidationError(f"Filter {index + 1}: “{op}” cannot be used on “{column.label}”.", field)
        raise ValidationError(f"Filter {index + 1}: “{op[:40]}” is not a condition the builder offers.", field)
    if op in VALUELESS:
        return {"column": column.name, "op": op, "value": None}
    value = raw.get("value")
    # Only when a definition is saved or previewed: queries stored before this check keep running.
    if (saving or op == "ieq") and op in TEXT_COMPARISONS and not str(value or "").strip():
        raise ValidationError(
            f"Filter {index + 1}: enter the text to compare “{column.label}” with, or choose “is empty”.",
            field,
        )
    if op == "between":
        parts = value if isinstance(value, list | tuple) else str(value or "").split(",")
        if len(parts) != 2:
            raise ValidationError(f"Filter {index + 1}: “between” needs two values, from and to.", field)
        low, high = (_parse_scalar(column, p, field) for p in parts)
        return {"column": column.name, "op": op, "value": [low, high]}
    if op == "in":
        if isinstance(value, list | tuple):
            # Picked from a list: each value exactly as offered, spaces and commas included.
            items = [str(i) for i in value if str(i).strip()]
        else:
            items = [i.strip() for i in str(value or "").split(",") if i.strip()]
        if not items or len(items) > 100:
            raise ValidationError(f"Filter {index + 1}: list between 1 and 100 values.", field)
        return {"column": column.name, "op": op, "value": [_parse_scalar(column, i, field) for i in items]}
    return {"column": column.name, "op": op, "value": _parse_scalar(column, value, field)}


def validate_definition(definition: dict, max_rows: int, saving: bool = False) -> dict:
    """The definition in normal form, or ValidationError naming what is wrong and where.

    `saving` is for a definition someone is writing now (saved or previewed): it also refuses
    what older definitions were let through with, such as “contains” an empty text.
    The parts are checked in the order the form shows them; the first refusal is raised.
    """
    _refuse_unstorable_fields(definition)
    dataset = _checked_dataset(definition.get("dataset", ""))
    return {
        "dataset": dataset.name,
        "columns": _checked_columns(dataset, definition.get("columns") or []),
        "filters": _checked_filters(dataset, definition.get("filters") or [], saving),
        "sort": _checked_sort(dataset, definition.get("sort") or []),
        "parameters": _checked_parameters(dataset, definition.get("parameters") or []),
        "row_limit": _checked_row_limit(definition.get("row_limit"), max_rows),
    }


def _checked_dataset(name: object) -> Dataset:
    dataset = get_dataset(str(name))
    if dataset is None:
        raise ValidationError("Choose a dataset.", "dataset")
    return dataset


def _checked_columns(dataset: Dataset, raw_columns: list) -> list[str]:
    columns = [str(c) for c in raw_columns]
    if not columns:
        raise ValidationError("Choose at least one column.", "columns")
    if len(columns) > MAX_COLUMNS:
        raise ValidationError(f"Choose at most {MAX_COLUMNS} columns.", "columns")
    unknown = [c for c in columns if dataset.column(c) is None]
    if unknown:
        raise ValidationError(f"Unknown column “{unknown[0]}” in {dataset.label}.", "columns")
    if len(set(columns)) != len(columns):
        raise ValidationError("Each column can be chosen once.", "columns")
    return columns


def _checked_filters(dataset: Dataset, raw_filters: list, saving: bool) -> list[dict]:
    if len(raw_filters) > MAX_FILTERS:
        raise ValidationError(f"Use at most {MAX_FILTERS} filters.", "filters")
    if not all(isinstance(f, dict) for f in raw_filters):
        raise ValidationError("Each filter names a column, a condition and a value.", "filters")
    return [_validate_filter(dataset, f, i, saving) for i, f in enumerate(raw_filters)]


def _checked_sort(dataset: Dataset, raw_sort: list) -> list[dict]:
    sort = []
    # The keys within the limit are judged first: a bad one among them is the refusal to show.
    for i, raw in enumerate(raw_sort[: MAX_SORT + 1]):
        if i >= MAX_SORT:
            raise ValidationError(f"Sort by at most {MAX_SORT} columns.", "sort")
        sort.append(_checked_sort_key(dataset, raw))
    return sort


def _checked_sort_key(dataset: Dataset, raw: dict) -> dict:
    column = dataset.column(str(raw.get("column", "")))
    if column is None:
        raise ValidationError(f"Unknown sort column “{raw.get('column', '')}”.", "sort")
    direction = raw.get("direction", "asc")
    if direction not in ("asc", "desc"):
        raise ValidationError("Sort direction is ascending or descending.", "sort")
    return {"column": column.name, "direction": direction}


def _checked_parameters(dataset: Dataset, raw_parameters: list) -> list[dict]:
    return [_checked_parameter(dataset, raw) for raw in raw_parameters]


def _checked_parameter(dataset: Dataset, raw: dict) -> dict:
    column = dataset.column(str(raw.get("column", "")))
    if column is None or column.type not in ("date", "datetime"):
        raise ValidationError("A date range applies to a date or date-time column.", "parameters")
    if raw.get("range") not in RELATIVE_RANGES:
        raise ValidationError("Choose one of the offered date ranges.", "parameters")
    return {"column": column.name, "range": raw["range"]}


def _checked_row_limit(row_limit: object, max_rows: int) -> int | None:
    if row_limit in (None, ""):
        return None
    return whole_number(
        row_limit,
        "row_limit",
        "The row limit is a whole number.",
        1,
        max_rows,
        range_message=f"The row limit is between 1 and {max_rows:,}.",
    )


def _refuse_unstorable_fields(definition: dict) -> None:
    """Every text of the definition, checked before any of it is compared or stored."""
    labels = {
        "dataset": "the dataset",
        "columns": "the columns",
        "sort": "the sort",
        "parameters": "the date ranges",
        "row_limit": "the row limit",
    }
    for key, label in labels.items():
        refuse_unstorable(definition.get(key), key, label)
    for index, raw in enumerate(definition.get("filters") or []):
        refuse_unstorable(raw, f"filters-{index}", f"filter {index + 1}")


def resolve_range(name: str, today: date) -> tuple[date, date]:
    """The first and last day (inclusive) a relative range covers on `today`."""
    monday = today - timedelta(days=today.weekday())
    first_of_month = today.replace(day=1)
    last_month_end = first_of_month - timedelta(days=1)
    return {
        "today": (today, today),
        "yesterday": (today - timedelta(days=1), today - timedelta(days=1)),
        "last_7_days": (today - timedelta(days=6), today),
        "last_30_days": (today - timedelta(days=29), today),
        "this_week": (monday, today),
        "last_week": (monday - timedelta(days=7), monday - timedelta(days=1)),
        "this_month": (first_of_month, today),
        "last_month": (last_month_end.replace(day=1), last_month_end),
        "this_year": (today.replace(month=1, day=1), today),
    }[name]


def substitute(definition: dict, today: date) -> FileRequest:
    """The request a file keeps: parameters turned into concrete `between` filters on `today`.

    Date-time columns get the whole last day: the filter ends before midnight after it.
    """
    dataset = get_dataset(definition["dataset"])
    assert dataset is not None
    filters = [Filter.from_json(raw) for raw in definition["filters"]]
    applied = []
    for parameter in definition["parameters"]:
        first, last = resolve_range(parameter["range"], today)
        column = dataset.column(parameter["column"])
        assert column is not None
        if column.type == "date":
            filters.append(Filter(column.name, "between", (first.isoformat(), last.isoformat())))
        else:
            start = datetime.combine(first, datetime.min.time())
            end = datetime.combine(last + timedelta(days=1), datetime.min.time())
            filters.append(Filter(column.name, "ge", start.isoformat()))
            filters.append(Filter(column.name, "lt", end.isoformat()))
        applied.append(AppliedRange(column.name, parameter["range"], first.isoformat(), last.isoformat()))
    return FileRequest(
        dataset=definition["dataset"],
        columns=tuple(definition["columns"]),
        filters=tuple(filters),
        sort=tuple(SortKey.from_json(raw) for raw in definition["sort"]),
        row_limit=definition["row_limit"],
        parameters_applied=tuple(applied),
    )
