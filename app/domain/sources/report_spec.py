"""Report definitions: validation against the catalog and the saved query the report presents.

A definition is plain data (name, kind, layout, print parameters). It is checked here before it
is saved, and the layout is checked again when a file is requested, because the saved query
may have changed since: a report whose columns its query no longer has cannot be printed. The
checked layout is a ReportLayout (app/domain/sources/print_params.py), which the file keeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from app.domain.errors import Conflict, ValidationError
from app.domain.sources.catalog import Column, Dataset, get_dataset
from app.domain.sources.print_params import FIGURE_FUNCTIONS, Figure, ReportColumn, ReportLayout, SummarySpec
from app.domain.sources.stored_request import FileRequest, SortKey
from app.domain.values.text_rules import refuse_line_breaks, refuse_unstorable, whole_number
from app.models.report import ORIENTATIONS, PAGE_SIZES, ReportKind

KIND_LABELS = {
    ReportKind.TABLE: "Table — the rows with chosen columns",
    ReportKind.CODED: "Coded — rows grouped by a code, with subtotals",
    ReportKind.SUMMARY: "Summary — headline figures and a bar chart (PDF only)",
}
NUMERIC_TYPES = ("integer", "decimal")
# Grouping by a decimal or a timestamp would make one group per row.
GROUPABLE_TYPES = ("text", "integer", "date", "boolean")
MAX_REPORT_COLUMNS = 20
MAX_FIGURES = 6
MAX_CODE_DESCRIPTIONS = 200
MIN_WIDTH, MAX_WIDTH = 3, 100
NAME_LIMIT = TITLE_LIMIT = 200
SUBTITLE_LIMIT = 300
FIGURE_LABEL_LIMIT = 80
# Every field of a report definition, as a sentence names it.
FIELD_LABELS = {
    "name": "the name",
    "kind": "the kind",
    "source_query_id": "the saved query",
    "columns": "the columns",
    "code_column": "the code column",
    "code_descriptions": "the code descriptions",
    "summary": "the summary figures",
    "title": "the title",
    "subtitle": "the subtitle",
    "page_size": "the page size",
    "orientation": "the orientation",
}


class QueryInUse(Conflict):
    """A saved query that reports present or schedules send cannot be deleted; the message names them."""

    def __init__(self, report_names: list[str], schedule_names: list[str] | None = None):
        schedule_names = schedule_names or []
        users = []
        if report_names:
            noun = "report" if len(report_names) == 1 else "reports"
            users.append(f"the {noun} " + ", ".join(f"“{name}”" for name in report_names))
        if schedule_names:
            noun = "schedule" if len(schedule_names) == 1 else "schedules"
            users.append(f"the {noun} " + ", ".join(f"“{name}”" for name in schedule_names))
        plural = len(report_names) + len(schedule_names) > 1
        them = "them" if plural else "it"
        super().__init__(f"This query is used by {' and '.join(users)}. Delete or change {them} first.")
        self.report_names = report_names
        self.schedule_names = schedule_names


def _text(data: dict, key: str, limit: int, label: str, required: bool = False) -> str:
    """A single-line text of the report (its name, title or subtitle)."""
    value = str(data.get(key) or "")
    refuse_line_breaks(value, key, f"the {label}")
    value = value.strip()
    if required and not value:
        raise ValidationError(f"Enter a {label}.", key)
    if len(value) > limit:
        raise ValidationError(f"The {label} is longer than {limit} characters.", key)
    return value


def _query_column(dataset: Dataset, query_columns: list[str], name: object, field: str) -> Column:
    column = dataset.column(str(name or ""))
    if column is None or column.name not in query_columns:
        raise ValidationError(f"“{str(name)[:40]}” is not a column of the report's query.", field)
    return column


def _width(raw: object, label: str) -> int | None:
    if raw in (None, ""):
        return None
    return whole_number(
        raw,
        "columns",
        f"The width of “{label}” is a whole percentage.",
        MIN_WIDTH,
        MAX_WIDTH,
        range_message=f"The width of “{label}” is between {MIN_WIDTH}% and {MAX_WIDTH}%.",
    )


def _validate_columns(dataset: Dataset, query_columns: list[str], raw_columns: list) -> tuple[ReportColumn, ...]:
    if not raw_columns:
        raise ValidationError("Choose at least one column to print.", "columns")
    if len(raw_columns) > MAX_REPORT_COLUMNS:
        raise ValidationError(f"Choose at most {MAX_REPORT_COLUMNS} columns; a page holds no more.", "columns")
    columns = []
    for raw in raw_columns:
        column = _query_column(dataset, query_columns, raw.get("name"), "columns")
        columns.append(ReportColumn(column.name, _width(raw.get("width"), column.label)))
    if len({c.name for c in columns}) != len(columns):
        raise ValidationError("Each column can be chosen once.", "columns")
    chosen = [c.width for c in columns if c.width is not None]
    unsized = len(columns) - len(chosen)
    if sum(chosen) + unsized * MIN_WIDTH > 100:
        raise ValidationError("The column widths add up to more than the page: keep their total under 100%.", "columns")
    return tuple(columns)


def _validate_code_descriptions(raw: Mapping[object, object] | None) -> dict[str, str]:
    descriptions = dict(raw or {})
    if len(descriptions) > MAX_CODE_DESCRIPTIONS:
        raise ValidationError(f"Describe at most {MAX_CODE_DESCRIPTIONS} codes.", "code_descriptions")
    clean = {}
    for code, description in descriptions.items():
        code, description = str(code).strip(), str(description).strip()
        if not code or len(code) > 100 or len(description) > 200:
            raise ValidationError(
                "Each code description is “code = description”, the code up to 100 characters and the "
                "description up to 200.",
                "code_descriptions",
            )
        clean[code] = description
    return clean


def _validate_summary(dataset: Dataset, query_columns: list[str], raw: dict) -> SummarySpec:
    group_column = raw.get("group_column") or None
    if group_column is not None:
        column = _query_column(dataset, query_columns, group_column, "group_column")
        if column.type not in GROUPABLE_TYPES:
            raise ValidationError(
                f"Rows cannot be grouped by “{column.label}”: choose a text, number or date.", "group_column"
            )
        group_column = column.name
    raw_figures = list(raw.get("figures") or [])
    if not raw_figures:
        raise ValidationError("Choose at least one figure.", "figures")
    if len(raw_figures) > MAX_FIGURES:
        raise ValidationError(f"Choose at most {MAX_FIGURES} figures.", "figures")
    figures = []
    for index, figure in enumerate(raw_figures):
        function = str(figure.get("function") or "")
        if function not in FIGURE_FUNCTIONS:
            raise ValidationError(f"Figure {index + 1}: choose count, sum, average, minimum or maximum.", "figures")
        if function == "count":
            column_name, default_label = None, "Rows"
        else:
            column = _query_column(dataset, query_columns, figure.get("column"), "figures")
            if column.type not in NUMERIC_TYPES:
                raise ValidationError(f"Figure {index + 1}: “{column.label}” is not a number.", "figures")
            column_name, default_label = column.name, f"{FIGURE_FUNCTIONS[function]} of {column.label}"
        label = str(figure.get("label") or "")
        refuse_line_breaks(label, "figures", f"figure {index + 1}'s label")
        label = label.strip() or default_label
        if len(label) > FIGURE_LABEL_LIMIT:
            raise ValidationError(
                f"Figure {index + 1}: the label is longer than {FIGURE_LABEL_LIMIT} characters.", "figures"
            )
        figures.append(Figure(function, column_name, label))
    return SummarySpec(group_column, tuple(figures))


def validate_layout(layout: dict, dataset_name: str, query_columns: list[str]) -> ReportLayout:
    """The layout (kind, columns, code column and descriptions, summary) in normal form for this query."""
    dataset = get_dataset(dataset_name)
    if dataset is None:
        raise ValidationError("The report's query has no dataset any more.", "source_query_id")
    kind = layout.get("kind")
    if kind not in tuple(ReportKind):
        raise ValidationError("Choose table, coded or summary.", "kind")
    if kind == ReportKind.SUMMARY:
        return ReportLayout(kind, summary=_validate_summary(dataset, query_columns, dict(layout.get("summary") or {})))
    columns = _validate_columns(dataset, query_columns, list(layout.get("columns") or []))
    if kind != ReportKind.CODED:
        return ReportLayout(kind, columns)
    if not layout.get("code_column"):
        raise ValidationError("Choose the code column the rows are grouped by.", "code_column")
    column = _query_column(dataset, query_columns, layout.get("code_column"), "code_column")
    if column.type not in GROUPABLE_TYPES:
        raise ValidationError(
            f"Rows cannot be grouped by “{column.label}”: choose a text, number or date.", "code_column"
        )
    return ReportLayout(kind, columns, column.name, _validate_code_descriptions(layout.get("code_descriptions")))


def validate_report(data: dict, dataset_name: str, query_columns: list[str]) -> dict:
    """The whole definition in normal form, or ValidationError naming what is wrong and where."""
    for key, label in FIELD_LABELS.items():
        refuse_unstorable(data.get(key), key, label)
    name = _text(data, "name", NAME_LIMIT, "name", required=True)
    title = _text(data, "title", TITLE_LIMIT, "title") or name
    subtitle = _text(data, "subtitle", SUBTITLE_LIMIT, "subtitle")
    page_size = data.get("page_size") or "A4"
    if page_size not in PAGE_SIZES:
        raise ValidationError("Choose A4 or Letter.", "page_size")
    orientation = data.get("orientation") or "portrait"
    if orientation not in ORIENTATIONS:
        raise ValidationError("Choose portrait or landscape.", "orientation")
    layout = validate_layout(data, dataset_name, query_columns)
    return {
        "name": name,
        **layout.to_json(),
        "title": title,
        "subtitle": subtitle,
        "page_size": page_size,
        "orientation": orientation,
        "show_filters": bool(data.get("show_filters")),
        "show_generated_at": bool(data.get("show_generated_at")),
    }


def is_identifier(column: Column) -> bool:
    """An integer that names a row (an id), printed as it is and never added up."""
    return column.type == "integer" and (column.name == "id" or column.name.endswith("_id"))


def is_amount(column: Column) -> bool:
    """A number a coded report subtotals: any integer or decimal that is not an identifier."""
    return column.type in NUMERIC_TYPES and not is_identifier(column)


def code_sort_first(request: FileRequest, code_column: str) -> FileRequest:
    """The request with the code column as the first sort key, so each group's rows come together."""
    rest = tuple(key for key in request.sort if key.column != code_column)
    return replace(request, sort=(SortKey(code_column, "asc"), *rest))
