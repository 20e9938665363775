"""Report definitions are validated against the catalog and the columns of the report's query."""

import pytest

from app.blueprints.reports.forms import parse_code_descriptions
from app.domain.errors import ValidationError
from app.domain.sources.catalog import get_dataset
from app.domain.sources.print_params import ReportColumn, ReportLayout
from app.domain.sources.report_spec import QueryInUse, code_sort_first, is_amount, validate_report
from app.domain.sources.stored_request import FileRequest, Filter, SortKey
from app.rendering.report_xlsx import excel_date_format
from app.services.files.report_file_production import filters_text, printed_columns

QUERY_COLUMNS = ["id", "person_name", "team_name", "work_date", "hours", "approved", "note"]


def definition(**overrides) -> dict:
    values = {
        "name": "Hours by team",
        "kind": "table",
        "columns": [{"name": "person_name", "width": "40"}, {"name": "hours", "width": ""}],
        "code_column": "",
        "code_descriptions": {},
        "summary": {},
        "title": "",
        "subtitle": "",
        "page_size": "A4",
        "orientation": "portrait",
        "show_filters": True,
        "show_generated_at": False,
    }
    return {**values, **overrides}


def refusal(**overrides) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        validate_report(definition(**overrides), "timesheet_entries", QUERY_COLUMNS)
    return caught.value


def test_a_table_definition_comes_back_in_normal_form():
    """Widths become numbers or None, the title defaults to the name, flags are booleans."""
    checked = validate_report(definition(), "timesheet_entries", QUERY_COLUMNS)
    assert checked["columns"] == [{"name": "person_name", "width": 40}, {"name": "hours", "width": None}]
    assert checked["title"] == "Hours by team"
    assert checked["code_column"] is None and checked["summary"] == {}
    assert checked["show_filters"] is True and checked["show_generated_at"] is False


def test_a_column_the_query_does_not_select_is_refused():
    """A report prints only its query's columns, even when the dataset has the column."""
    error = refusal(columns=[{"name": "recorded_at", "width": ""}])
    assert error.field == "columns" and "recorded_at" in str(error)


def test_widths_over_the_page_are_refused():
    """Widths adding up to more than 100% (with room for the unsized columns) are refused."""
    error = refusal(columns=[{"name": "person_name", "width": "60"}, {"name": "hours", "width": "45"}])
    assert error.field == "columns" and "100%" in str(error)


def test_a_width_that_is_not_a_number_is_refused():
    """A width is a whole percentage."""
    assert refusal(columns=[{"name": "hours", "width": "wide"}]).field == "columns"


def test_a_coded_report_needs_a_code_column():
    """Coded reports group by a code column; none chosen is refused."""
    assert refusal(kind="coded").field == "code_column"


def test_a_decimal_code_column_is_refused():
    """Grouping by a decimal would make a group per row."""
    assert refusal(kind="coded", code_column="hours").field == "code_column"


def test_a_summary_sum_of_a_text_column_is_refused():
    """Sums and averages need a number column."""
    error = refusal(kind="summary", summary={"figures": [{"function": "sum", "column": "person_name"}]})
    assert error.field == "figures"


def test_a_summary_without_figures_is_refused():
    """A summary prints at least one figure."""
    assert refusal(kind="summary", summary={"figures": []}).field == "figures"


def test_summary_figures_get_default_labels():
    """A count has no column; the other figures are labelled by function and column."""
    checked = validate_report(
        definition(
            kind="summary",
            summary={
                "group_column": "team_name",
                "figures": [
                    {"function": "count", "column": "hours"},
                    {"function": "avg", "column": "hours", "label": ""},
                ],
            },
        ),
        "timesheet_entries",
        QUERY_COLUMNS,
    )
    assert checked["summary"] == {
        "group_column": "team_name",
        "figures": [
            {"function": "count", "column": None, "label": "Rows"},
            {"function": "avg", "column": "hours", "label": "Average of Hours"},
        ],
    }
    assert checked["columns"] == []


def test_an_unknown_page_size_is_refused():
    """Page size is A4 or Letter."""
    assert refusal(page_size="A3").field == "page_size"


def test_an_empty_name_is_refused():
    """A report needs a name."""
    assert refusal(name="   ").field == "name"


def test_code_descriptions_split_on_the_spaced_equals_sign_first():
    """`code = description` per line; a code starting with "=" can still be described."""
    assert parse_code_descriptions("A = Day team\n\n=1+2 = Odd code\nB=Night") == {
        "A": "Day team",
        "=1+2": "Odd code",
        "B": "Night",
    }


def test_a_code_description_line_without_equals_sign_is_refused():
    """Each line needs a code and a description."""
    with pytest.raises(ValidationError) as caught:
        parse_code_descriptions("A = ok\njust text")
    assert "Line 2" in str(caught.value)


def test_query_in_use_names_every_report():
    """The refusal to delete a query says which reports use it."""
    message = str(QueryInUse(["Weekly hours", "Leave summary"]))
    assert "“Weekly hours”" in message and "“Leave summary”" in message


def test_coded_requests_sort_by_the_code_first():
    """The code column leads the sort so each group's rows come together; the query's sort follows."""
    request = FileRequest(
        "timesheet_entries", ("hours", "team_name"), sort=(SortKey("hours", "desc"), SortKey("team_name", "desc"))
    )
    assert code_sort_first(request, "team_name").sort == (SortKey("team_name", "asc"), SortKey("hours", "desc"))


def test_identifiers_are_not_amounts():
    """Ids are never added up; hours are."""
    dataset = get_dataset("timesheet_entries")
    assert not is_amount(dataset.column("id")) and not is_amount(dataset.column("person_id"))
    assert is_amount(dataset.column("hours"))


def test_unsized_columns_share_what_the_given_widths_leave():
    """Two unsized columns next to a 40% one get 30% each; identifiers print right-aligned as text."""
    dataset = get_dataset("timesheet_entries")
    columns = printed_columns(
        dataset, ReportLayout("table", (ReportColumn("id", None), ReportColumn("note", 40), ReportColumn("hours")))
    )
    assert [c.width for c in columns] == [30, 40, 30]
    assert columns[0].type == "text" and columns[0].effective_align == "right"
    assert columns[2].type == "decimal"


def test_excel_date_format_follows_the_workspace_pattern():
    """strftime patterns become Excel number formats."""
    assert excel_date_format("%d/%m/%Y") == "dd/mm/yyyy"
    assert excel_date_format("%Y-%m-%d") == "yyyy-mm-dd"
    assert excel_date_format("%d.%m.%y") == "dd.mm.yy"


def test_filters_are_described_with_the_workspace_date_format():
    """The title block's filter line prints dates as the workspace writes them."""
    request = FileRequest(
        "timesheet_entries",
        ("work_date", "approved"),
        filters=(Filter("work_date", "between", ("2026-11-01", "2026-11-07")), Filter("approved", "is_true")),
    )
    text = filters_text(request, get_dataset("timesheet_entries"), "%d.%m.%Y")
    assert text == "Filters: Date between 01.11.2026 and 07.11.2026; Approved is yes"


def test_a_filter_is_described_without_the_builders_hints_in_brackets():
    request = FileRequest(
        "timesheet_entries",
        ("project", "note"),
        filters=(Filter("project", "eq", "pending"), Filter("note", "in", ("a", "b"))),
    )
    text = filters_text(request, get_dataset("timesheet_entries"), "%d.%m.%Y")
    assert text == "Filters: Project is exactly pending; Note is one of a, b"
