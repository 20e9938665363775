"""How a report file is printed: the page settings and the report's layout, as the file keeps them.

Admission builds them from the report (app/services/files/report_files.py, the layout checked against
the query by app/domain/sources/report_spec.validate_layout) and stores their JSON in
`query_exports.print_params`; production reads it back with `PrintParams.from_json`. The JSON
shape is the one files have always been stored in:

    {"title": "Hours", "subtitle": "", "page_size": "A4", "orientation": "portrait",
     "show_filters": true, "show_generated_at": true,
     "layout": {"kind": "coded", "columns": [{"name": "hours", "width": 20}],
                "code_column": "team_name", "code_descriptions": {"A": "Team A"}, "summary": {}}}

A summary report's layout has no columns and `"summary": {"group_column": …, "figures":
[{"function": "sum", "column": "hours", "label": "Hours"}]}`; the other kinds have `{}` there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.domain.sources.stored_shape import StoredShape
from app.models.report import ORIENTATIONS, PAGE_SIZES, ReportKind

FIGURE_FUNCTIONS = {"count": "Count of rows", "sum": "Sum", "avg": "Average", "min": "Minimum", "max": "Maximum"}

_SHAPE = StoredShape("print parameters")


@dataclass(frozen=True)
class ReportColumn:
    """A printed column and its width in percent of the page (None: an equal share of what is left)."""

    name: str
    width: int | None = None

    @classmethod
    def from_json(cls, data: Any, path: str = "column") -> ReportColumn:
        data = _SHAPE.mapping(data, path, ("name",), ("width",))
        return cls(
            _SHAPE.text(data["name"], f"{path}.name"),
            _SHAPE.optional_whole_number(data.get("width"), f"{path}.width", 1),
        )

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "width": self.width}


@dataclass(frozen=True)
class Figure:
    """A summary figure: a function over a column (none for `count`), with the label it prints under."""

    function: str
    column: str | None
    label: str

    @classmethod
    def from_json(cls, data: Any, path: str = "figure") -> Figure:
        data = _SHAPE.mapping(data, path, ("function", "label"), ("column",))
        function = _SHAPE.choice(data["function"], f"{path}.function", FIGURE_FUNCTIONS)
        column = _SHAPE.optional_text(data.get("column"), f"{path}.column")
        if function != "count" and column is None:
            raise _SHAPE.refuse(f"{path}.column", f"the column a “{function}” figure is taken of")
        return cls(function, column, _SHAPE.text(data["label"], f"{path}.label"))

    def to_json(self) -> dict[str, Any]:
        return {"function": self.function, "column": self.column, "label": self.label}


@dataclass(frozen=True)
class SummarySpec:
    """A summary report's figures, grouped for its chart by `group_column` when there is one."""

    group_column: str | None
    figures: tuple[Figure, ...]

    @classmethod
    def from_json(cls, data: Any, path: str = "summary") -> SummarySpec:
        data = _SHAPE.mapping(data, path, ("figures",), ("group_column",))
        figures = _SHAPE.each(data["figures"], f"{path}.figures", Figure.from_json)
        if not figures:
            raise _SHAPE.refuse(f"{path}.figures", "a list of at least one figure")
        return cls(_SHAPE.optional_text(data.get("group_column"), f"{path}.group_column"), figures)

    def to_json(self) -> dict[str, Any]:
        return {"group_column": self.group_column, "figures": [f.to_json() for f in self.figures]}


@dataclass(frozen=True)
class ReportLayout:
    """What a report presents of its query's rows: the kind, and its columns, code column or summary."""

    kind: str
    columns: tuple[ReportColumn, ...] = ()
    code_column: str | None = None
    # {code as printed (or as stored): description printed in the group heading}
    code_descriptions: dict[str, str] = field(default_factory=dict)
    summary: SummarySpec | None = None

    @property
    def column_names(self) -> list[str]:
        return [column.name for column in self.columns]

    @property
    def grouped_by(self) -> str:
        """The column a coded report groups its rows by (from_json refuses a coded layout without one)."""
        if self.code_column is None:
            raise ValueError(f"a {self.kind} report layout names no column to group by")
        return self.code_column

    @classmethod
    def from_json(cls, data: Any, path: str = "layout") -> ReportLayout:
        data = _SHAPE.mapping(data, path, ("kind",), ("columns", "code_column", "code_descriptions", "summary"))
        kind = _SHAPE.choice(data["kind"], f"{path}.kind", ReportKind)
        code_column = _SHAPE.optional_text(data.get("code_column"), f"{path}.code_column")
        if kind == ReportKind.CODED and code_column is None:
            raise _SHAPE.refuse(f"{path}.code_column", "the column a coded report groups by")
        summary = SummarySpec.from_json(data["summary"], f"{path}.summary") if data.get("summary") else None
        if kind == ReportKind.SUMMARY and summary is None:
            raise _SHAPE.refuse(f"{path}.summary", "the figures of a summary report")
        return cls(
            kind=kind,
            columns=_SHAPE.each(data.get("columns"), f"{path}.columns", ReportColumn.from_json),
            code_column=code_column,
            code_descriptions=_SHAPE.text_map(data.get("code_descriptions"), f"{path}.code_descriptions"),
            summary=summary,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "columns": [c.to_json() for c in self.columns],
            "code_column": self.code_column,
            "code_descriptions": dict(self.code_descriptions),
            "summary": self.summary.to_json() if self.summary is not None else {},
        }


@dataclass(frozen=True)
class PrintParams:
    """The page a report file prints on (title block, size, orientation) and the layout it prints."""

    title: str
    subtitle: str
    page_size: str
    orientation: str
    show_filters: bool
    show_generated_at: bool
    layout: ReportLayout

    @classmethod
    def from_json(cls, data: Any) -> PrintParams:
        """The print parameters stored as `data`, or ValidationError naming what is not in their shape."""
        data = _SHAPE.mapping(
            data,
            "print parameters",
            ("title", "page_size", "orientation", "layout"),
            ("subtitle", "show_filters", "show_generated_at"),
        )
        return cls(
            title=_SHAPE.text(data["title"], "title"),
            subtitle=_SHAPE.optional_text(data.get("subtitle"), "subtitle") or "",
            page_size=_SHAPE.choice(data["page_size"], "page_size", PAGE_SIZES),
            orientation=_SHAPE.choice(data["orientation"], "orientation", ORIENTATIONS),
            show_filters=_SHAPE.flag(data.get("show_filters", False), "show_filters"),
            show_generated_at=_SHAPE.flag(data.get("show_generated_at", False), "show_generated_at"),
            layout=ReportLayout.from_json(data["layout"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "subtitle": self.subtitle,
            "page_size": self.page_size,
            "orientation": self.orientation,
            "show_filters": self.show_filters,
            "show_generated_at": self.show_generated_at,
            "layout": self.layout.to_json(),
        }
