"""A file's stored request read back as a FileRequest (or, for an audit log file, an AuditSelection):
the JSON round-trips unchanged, a damaged one is refused."""

from __future__ import annotations

import copy
import json
from datetime import date

import pytest

from app.domain.errors import ValidationError
from app.domain.sources.query_spec import substitute, validate_definition
from app.domain.sources.stored_request import AppliedRange, AuditSelection, FileRequest, Filter, SortKey

# A request as admission has stored it since the first release, with a filter value of every shape.
STORED = {
    "dataset": "timesheet_entries",
    "columns": ["id", "person_name", "work_date", "hours", "approved", "recorded_at"],
    "filters": [
        {"column": "person_name", "op": "contains", "value": '=1+2 "quoted" ‮'},
        {"column": "id", "op": "ge", "value": 3},
        {"column": "hours", "op": "between", "value": ["1.5", "8"]},
        {"column": "person_name", "op": "in", "value": ["Ana", "Bo"]},
        {"column": "approved", "op": "is_true", "value": None},
        {"column": "work_date", "op": "between", "value": ["2026-11-04", "2026-11-10"]},
        {"column": "recorded_at", "op": "lt", "value": "2026-11-11T00:00:00"},
    ],
    "sort": [{"column": "hours", "direction": "desc"}, {"column": "id", "direction": "asc"}],
    "row_limit": 500,
    "parameters_applied": [{"column": "work_date", "range": "last_7_days", "from": "2026-11-04", "to": "2026-11-10"}],
}


def test_a_stored_request_round_trips_to_the_same_json():
    """Reading a stored request and writing it back gives the very JSON that was stored."""
    stored = copy.deepcopy(STORED)
    assert FileRequest.from_json(stored).to_json() == STORED
    assert json.dumps(FileRequest.from_json(stored).to_json()) == json.dumps(STORED)


def test_a_stored_request_reads_as_typed_values():
    """Filters, sort keys and applied ranges become their dataclasses; list values become tuples."""
    request = FileRequest.from_json(STORED)
    assert request.columns[0] == "id" and request.row_limit == 500
    assert request.filters[2] == Filter("hours", "between", ("1.5", "8"))
    assert request.filters[4] == Filter("approved", "is_true", None)
    assert request.sort[0] == SortKey("hours", "desc") and request.sort[0].descending
    assert request.parameters_applied == (AppliedRange("work_date", "last_7_days", "2026-11-04", "2026-11-10"),)


def test_the_substituted_request_of_a_definition_is_stored_in_the_long_standing_shape():
    """substitute gives a FileRequest whose JSON has exactly the keys stored files have."""
    definition = validate_definition(
        {
            "dataset": "timesheet_entries",
            "columns": ["id", "recorded_at"],
            "filters": [
                {"column": "id", "op": "between", "value": "1,2"},
                {"column": "person_name", "op": "in", "value": "Ana, Bo"},
            ],
            "sort": [{"column": "id", "direction": "desc"}],
            "parameters": [{"column": "recorded_at", "range": "yesterday"}],
            "row_limit": "10",
        },
        1_000,
    )
    stored = substitute(definition, date(2026, 11, 10)).to_json()
    assert stored == {
        "dataset": "timesheet_entries",
        "columns": ["id", "recorded_at"],
        "filters": [
            {"column": "id", "op": "between", "value": [1, 2]},
            {"column": "person_name", "op": "in", "value": ["Ana", "Bo"]},
            {"column": "recorded_at", "op": "ge", "value": "2026-11-09T00:00:00"},
            {"column": "recorded_at", "op": "lt", "value": "2026-11-10T00:00:00"},
        ],
        "sort": [{"column": "id", "direction": "desc"}],
        "row_limit": 10,
        "parameters_applied": [
            {"column": "recorded_at", "range": "yesterday", "from": "2026-11-09", "to": "2026-11-09"}
        ],
    }
    assert FileRequest.from_json(stored).to_json() == stored


def test_missing_optional_parts_read_as_empty():
    """A request with only dataset and columns has no filters, sort, limit or applied ranges."""
    request = FileRequest.from_json({"dataset": "teams", "columns": ["name"]})
    assert (request.filters, request.sort, request.row_limit, request.parameters_applied) == ((), (), None, ())


def _with(**changes) -> dict:
    return {**copy.deepcopy(STORED), **changes}


@pytest.mark.parametrize(
    ("stored", "named"),
    [
        (None, "request should be an object"),
        (["timesheet_entries"], "request should be an object"),
        ({"columns": ["id"]}, "request.dataset should be present"),
        (_with(dataset=7), "dataset should be text"),
        (_with(columns="id"), "columns should be a list"),
        (_with(columns=["id", None]), "columns[1] should be text"),
        (_with(filters={"column": "id"}), "filters should be a list"),
        (_with(filters=["id = 1"]), "filters[0] should be an object"),
        (_with(filters=[{"column": "id", "value": 1}]), "filters[0].op should be present"),
        (_with(filters=[{"column": "id", "op": 5, "value": 1}]), "filters[0].op should be text"),
        (_with(filters=[{"column": "id", "op": "eq", "value": {"n": 1}}]), "filters[0].value should be text"),
        (_with(filters=[{"column": "id", "op": "in", "value": [1, [2]]}]), "filters[0].value[1] should be text"),
        (_with(filters=[{"column": "id", "op": "eq", "value": True}]), "filters[0].value should be text"),
        (_with(sort=["id"]), "sort[0] should be an object"),
        (_with(sort=[{"column": "id", "direction": "up"}]), "sort[0].direction should be one of asc, desc"),
        (_with(row_limit="100"), "row_limit should be a whole number of at least 1"),
        (_with(row_limit=0), "row_limit should be a whole number of at least 1"),
        (_with(row_limit=True), "row_limit should be a whole number of at least 1"),
        (
            _with(parameters_applied=[{"column": "work_date", "range": "today", "from": "2026-11-10"}]),
            "parameters_applied[0].to should be present",
        ),
        (_with(parameters=[]), "request.parameters should be absent"),
    ],
)
def test_a_request_not_in_its_shape_is_refused_with_where_it_is_wrong(stored, named):
    """A damaged stored request gives a ValidationError naming the part that is wrong, never a KeyError."""
    with pytest.raises(ValidationError) as caught:
        FileRequest.from_json(stored)
    assert str(caught.value).startswith("The stored request cannot be read: ")
    assert named in str(caught.value)


def test_an_audit_selection_round_trips_to_the_same_json():
    stored = {"action": "schedule.paused", "actor_id": 7, "since": "2026-11-01", "until": None}

    selection = AuditSelection.from_json(stored)

    assert selection == AuditSelection("schedule.paused", 7, date(2026, 11, 1), None)
    assert selection.to_json() == stored


@pytest.mark.parametrize(
    ("stored", "named"),
    [
        ({"action": 3}, "action"),
        ({"actor_id": "7"}, "actor_id"),
        ({"actor_id": 0}, "actor_id"),
        ({"since": "yesterday"}, "since"),
        ({"until": 20261101}, "until"),
        ({"columns": ["id"]}, "columns"),
        (["schedule.paused"], "request"),
    ],
)
def test_an_audit_selection_not_in_its_shape_is_refused_with_where_it_is_wrong(stored, named):
    with pytest.raises(ValidationError, match=named):
        AuditSelection.from_json(stored)
