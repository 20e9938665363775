"""The report form: what the person typed, read from the request and shown back.

Like the query builder it is plain data rather than a WTForms form, because the fields it has
depend on the chosen query and kind. It never validates beyond reading the text it was given:
app.domain.sources.report_spec does, and a refused save shows the form exactly as it was typed. Field
names are flat (`width-hours`, `figures-0-function`) so it works as an ordinary form; htmx
only re-renders the part that depends on the query and kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from werkzeug.datastructures import MultiDict

from app.domain.errors import ValidationError
from app.domain.sources.catalog import Column, get_dataset
from app.domain.sources.report_spec import GROUPABLE_TYPES, MAX_FIGURES, NUMERIC_TYPES
from app.domain.values.text_rules import opened_version
from app.models import Report, SavedQuery
from app.models.report import PRINT_PARAMETERS, ReportKind


@dataclass
class FigureRow:
    function: str = ""
    column: str = ""
    label: str = ""


@dataclass
class ReportForm:
    name: str = ""
    kind: str = ReportKind.TABLE
    source_query_id: str = ""
    columns: list[str] = field(default_factory=list)
    widths: dict[str, str] = field(default_factory=dict)
    code_column: str = ""
    code_descriptions: str = ""
    group_column: str = ""
    figures: list[FigureRow] = field(default_factory=list)
    title: str = ""
    subtitle: str = ""
    page_size: str = "A4"
    orientation: str = "portrait"
    show_filters: bool = True
    show_generated_at: bool = True
    version: str = ""

    @classmethod
    def blank(cls, query: SavedQuery | None) -> ReportForm:
        if query is None:
            return cls(figures=[FigureRow("count")])
        return cls(source_query_id=str(query.id), columns=list(query.columns), figures=[FigureRow("count")])

    @classmethod
    def from_report(cls, report: Report) -> ReportForm:
        summary = report.summary or {}
        return cls(
            name=report.name,
            kind=report.kind,
            source_query_id=str(report.source_query_id),
            columns=[c["name"] for c in report.columns],
            widths={c["name"]: "" if c.get("width") is None else str(c["width"]) for c in report.columns},
            code_column=report.code_column or "",
            code_descriptions="\n".join(f"{code} = {text}" for code, text in (report.code_descriptions or {}).items()),
            group_column=summary.get("group_column") or "",
            figures=[
                FigureRow(f["function"], f.get("column") or "", f.get("label") or "")
                for f in summary.get("figures", [])
            ],
            **report.print_params(),
            version=str(report.version),
        )

    @classmethod
    def from_request(cls, form: MultiDict) -> ReportForm:
        columns = form.getlist("columns")
        figures = []
        for index in range(MAX_FIGURES + 1):
            row = FigureRow(
                form.get(f"figures-{index}-function", ""),
                form.get(f"figures-{index}-column", ""),
                form.get(f"figures-{index}-label", ""),
            )
            if row.function:
                figures.append(row)
        return cls(
            name=form.get("name", ""),
            kind=form.get("kind", ReportKind.TABLE),
            source_query_id=form.get("source_query_id", ""),
            columns=columns,
            widths={key[len("width-") :]: value for key, value in form.items() if key.startswith("width-")},
            code_column=form.get("code_column", ""),
            code_descriptions=form.get("code_descriptions", ""),
            group_column=form.get("group_column", ""),
            figures=figures,
            title=form.get("title", ""),
            subtitle=form.get("subtitle", ""),
            page_size=form.get("page_size", "A4"),
            orientation=form.get("orientation", "portrait"),
            show_filters=bool(form.get("show_filters")),
            show_generated_at=bool(form.get("show_generated_at")),
            version=form.get("version", ""),
        )

    def data(self) -> dict:
        """The definition as typed, for report_spec.validate_report to judge."""
        return {
            "name": self.name,
            "kind": self.kind,
            "source_query_id": self.source_query_id,
            "columns": [{"name": name, "width": self.widths.get(name, "")} for name in self.columns],
            "code_column": self.code_column,
            "code_descriptions": parse_code_descriptions(self.code_descriptions),
            "summary": {
                "group_column": self.group_column,
                "figures": [{"function": f.function, "column": f.column, "label": f.label} for f in self.figures],
            },
            **{name: getattr(self, name) for name in PRINT_PARAMETERS},
        }

    @property
    def expected_version(self) -> int | None:
        return opened_version(self.version)

    # --- What the form shows ------------------------------------------------------------------

    def query_columns(self, query: SavedQuery | None) -> list[Column]:
        """The chosen query's columns, in the query's order: what a report of it can print."""
        dataset = get_dataset(query.dataset) if query is not None else None
        if query is None or dataset is None:
            return []
        return [c for c in (dataset.column(name) for name in query.columns) if c is not None]

    def groupable_columns(self, query: SavedQuery | None) -> list[Column]:
        return [c for c in self.query_columns(query) if c.type in GROUPABLE_TYPES]

    def numeric_columns(self, query: SavedQuery | None) -> list[Column]:
        return [c for c in self.query_columns(query) if c.type in NUMERIC_TYPES]

    def figure_rows(self) -> list[FigureRow]:
        """The chosen figures and empty rows up to the limit."""
        return self.figures[:MAX_FIGURES] + [FigureRow() for _ in range(MAX_FIGURES - len(self.figures))]


def parse_code_descriptions(text: str) -> dict[str, str]:
    """One `code = description` per line; blank lines are skipped."""
    descriptions: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        # " = " first, so a code that itself starts with "=" can still be described.
        parts = line.split(" = ", 1) if " = " in line else line.split("=", 1)
        if len(parts) != 2 or not parts[0].strip():
            raise ValidationError(
                f"Line {number} of the code descriptions is not “code = description”.", "code_descriptions"
            )
        descriptions[parts[0].strip()] = parts[1].strip()
    return descriptions
