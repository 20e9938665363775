"""A report file's stored print parameters read back as PrintParams: the JSON round-trips, a damaged one is refused."""

from __future__ import annotations

import copy
import json

import pytest

from app.domain.errors import ValidationError
from app.domain.sources.print_params import Figure, PrintParams, ReportColumn, ReportLayout, SummarySpec
from app.domain.sources.report_spec import validate_layout

QUERY_COLUMNS = ["id", "person_name", "team_name", "work_date", "hours", "approved", "note"]

CODED = {
    "title": "Hours ‮ by team =SUM(A1)",
    "subtitle": "",
    "page_size": "A4",
    "orientation": "landscape",
    "show_filters": True,
    "show_generated_at": False,
    "layout": {
        "kind": "coded",
        "columns": [{"name": "person_name", "width": 40}, {"name": "hours", "width": None}],
        "code_column": "team_name",
        "code_descriptions": {"A": "Day team", "(none)": "No team", "=1+2": "Odd code"},
        "summary": {},
    },
}
SUMMARY = {
    "title": "Totals",
    "subtitle": "By team",
    "page_size": "Letter",
    "orientation": "portrait",
    "show_filters": False,
    "show_generated_at": True,
    "layout": {
        "kind": "summary",
        "columns": [],
        "code_column": None,
        "code_descriptions": {},
        "summary": {
            "group_column": "team_name",
            "figures": [
                {"function": "count", "column": None, "label": "Rows"},
                {"function": "avg", "column": "hours", "label": "Average of Hours"},
            ],
        },
    },
}
TABLE = {
    **CODED,
    "layout": {**CODED["layout"], "kind": "table", "code_column": None, "code_descriptions": {}},
}


@pytest.mark.parametrize("stored", [CODED, SUMMARY, TABLE], ids=["coded", "summary", "table"])
def test_stored_print_parameters_round_trip_to_the_same_json(stored):
    """Reading stored print parameters and writing them back gives the very JSON that was stored."""
    assert PrintParams.from_json(copy.deepcopy(stored)).to_json() == stored
    assert json.dumps(PrintParams.from_json(copy.deepcopy(stored)).to_json()) == json.dumps(stored)


def test_stored_print_parameters_read_as_typed_values():
    """The layout's columns, code column and summary figures become their dataclasses."""
    coded = PrintParams.from_json(CODED)
    assert coded.orientation == "landscape" and coded.show_filters and not coded.show_generated_at
    assert coded.layout.columns == (ReportColumn("person_name", 40), ReportColumn("hours", None))
    assert coded.layout.code_column == "team_name" and coded.layout.code_descriptions["(none)"] == "No team"
    assert coded.layout.summary is None
    summary = PrintParams.from_json(SUMMARY).layout.summary
    figures = (Figure("count", None, "Rows"), Figure("avg", "hours", "Average of Hours"))
    assert summary == SummarySpec("team_name", figures)


def test_a_validated_layout_is_stored_as_the_layout_files_keep():
    """validate_layout gives a ReportLayout whose JSON is the stored layout of a file."""
    layout = validate_layout(
        {
            "kind": "coded",
            "columns": [{"name": "person_name", "width": "40"}, {"name": "hours", "width": ""}],
            "code_column": "team_name",
            "code_descriptions": {"A": "Day team", "(none)": "No team", "=1+2": "Odd code"},
        },
        "timesheet_entries",
        QUERY_COLUMNS,
    )
    assert layout.to_json() == CODED["layout"]
    assert ReportLayout.from_json(layout.to_json()) == layout


def _with(base: dict, **changes) -> dict:
    return {**copy.deepcopy(base), **changes}


def _with_layout(base: dict, **changes) -> dict:
    stored = copy.deepcopy(base)
    stored["layout"].update(changes)
    return stored


@pytest.mark.parametrize(
    ("stored", "named"),
    [
        (None, "print parameters should be an object"),
        ({k: v for k, v in CODED.items() if k != "layout"}, "print parameters.layout should be present"),
        (_with(CODED, title=None), "title should be text"),
        (_with(CODED, page_size="A3"), "page_size should be one of A4, Letter"),
        (_with(CODED, orientation="sideways"), "orientation should be one of portrait, landscape"),
        (_with(CODED, show_filters="yes"), "show_filters should be true or false"),
        (_with(CODED, margins=2), "print parameters.margins should be absent"),
        (_with(CODED, layout="coded"), "layout should be an object"),
        (_with_layout(CODED, kind="pie"), "layout.kind should be one of table, coded, summary"),
        (_with_layout(CODED, code_column=None), "layout.code_column should be the column a coded report groups by"),
        (_with_layout(CODED, columns=[{"width": 40}]), "layout.columns[0].name should be present"),
        (_with_layout(CODED, columns=[{"name": "hours", "width": "40"}]), "layout.columns[0].width should be a whole"),
        (_with_layout(CODED, code_descriptions={"A": 1}), "layout.code_descriptions['A'] should be text"),
        (_with_layout(CODED, code_descriptions=["A"]), "layout.code_descriptions should be an object"),
        (_with_layout(SUMMARY, summary={}), "layout.summary should be the figures of a summary report"),
        (
            _with_layout(SUMMARY, summary={"group_column": None, "figures": []}),
            "layout.summary.figures should be a list of at least one figure",
        ),
        (
            _with_layout(SUMMARY, summary={"figures": [{"function": "median", "column": "hours", "label": "M"}]}),
            "layout.summary.figures[0].function should be one of count, sum, avg, min, max",
        ),
        (
            _with_layout(SUMMARY, summary={"figures": [{"function": "sum", "label": "Hours"}]}),
            "layout.summary.figures[0].column should be the column a “sum” figure is taken of",
        ),
    ],
)
def test_print_parameters_not_in_their_shape_are_refused_with_where_they_are_wrong(stored, named):
    """Damaged stored print parameters give a ValidationError naming the part that is wrong, never a KeyError."""
    with pytest.raises(ValidationError) as caught:
        PrintParams.from_json(stored)
    assert str(caught.value).startswith("The stored print parameters cannot be read: ")
    assert named in str(caught.value)
