"""build_select / iter_rows / count_rows on PostgreSQL: scope, filters, sort, limits."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest
from sqlalchemy import text

from app.data.query_runner import build_select, count_rows, iter_rows
from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.access import RequesterContext, current_context
from app.domain.sources.query_spec import substitute, validate_definition
from app.domain.sources.stored_request import FileRequest
from app.extensions import db
from tests import factories


def _request(**definition) -> dict:
    """A stored request, made the way admission makes it: validated, then substituted."""
    base = {"dataset": "timesheet_entries", "columns": ["id"], "filters": [], "sort": [], "parameters": []}
    return substitute(validate_definition({**base, **definition}, 1_000_000), date(2026, 11, 10))


def _ids(request: dict, access: RequesterContext) -> list[int]:
    return [row[0] for row in iter_rows(request, access)]


@pytest.fixture
def ledger(app_context):
    """One workspace, an administrator, and four timesheet entries with distinct values."""
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin")
    employee = factories.make_team_member(factories.make_team(workspace))
    specs = [
        ("Ward A", "Night 50% cover", "7.50", date(2026, 11, 2), True, datetime(2026, 11, 2, 18, 0, tzinfo=UTC)),
        ("ward_b", "Night 500 cover", "4.00", date(2026, 11, 3), False, datetime(2026, 11, 3, 23, 30, tzinfo=UTC)),
        ("wardXb", "", "8.25", date(2026, 11, 4), True, datetime(2026, 11, 4, 0, 0, tzinfo=UTC)),
        ("Ward A", "day", "12.00", date(2026, 11, 5), False, datetime(2026, 11, 5, 9, 15, tzinfo=UTC)),
    ]
    entries = [
        factories.make_timesheet_entry(
            employee, project=p, note=n, hours=Decimal(h), work_date=d, approved=a, recorded_at=r
        )
        for p, n, h, d, a, r in specs
    ]
    return SimpleNamespace(access=RequesterContext.of(admin), ids=[e.id for e in entries], workspace=workspace)


FILTER_CASES = [
    ({"column": "project", "op": "eq", "value": "Ward A"}, {1, 4}),
    ({"column": "project", "op": "ne", "value": "Ward A"}, {2, 3}),
    ({"column": "note", "op": "contains", "value": "50%"}, {1}),
    ({"column": "note", "op": "contains", "value": "NIGHT"}, {1, 2}),
    ({"column": "project", "op": "starts_with", "value": "WARD_"}, {2}),
    ({"column": "project", "op": "starts_with", "value": "ward"}, {1, 2, 3, 4}),
    ({"column": "project", "op": "in", "value": "Ward A, wardXb"}, {1, 3, 4}),
    ({"column": "note", "op": "is_empty"}, {3}),
    ({"column": "note", "op": "not_empty"}, {1, 2, 4}),
    ({"column": "hours", "op": "eq", "value": "7.5"}, {1}),
    ({"column": "hours", "op": "ne", "value": "7.5"}, {2, 3, 4}),
    ({"column": "hours", "op": "lt", "value": "7.50"}, {2}),
    ({"column": "hours", "op": "le", "value": "7.5"}, {1, 2}),
    ({"column": "hours", "op": "gt", "value": "7.5"}, {3, 4}),
    ({"column": "hours", "op": "ge", "value": "7.5"}, {1, 3, 4}),
    ({"column": "hours", "op": "between", "value": "4, 8"}, {1, 2}),
    ({"column": "work_date", "op": "eq", "value": "2026-11-03"}, {2}),
    ({"column": "work_date", "op": "lt", "value": "2026-11-03"}, {1}),
    ({"column": "work_date", "op": "le", "value": "2026-11-03"}, {1, 2}),
    ({"column": "work_date", "op": "gt", "value": "2026-11-03"}, {3, 4}),
    ({"column": "work_date", "op": "ge", "value": "2026-11-03"}, {2, 3, 4}),
    ({"column": "work_date", "op": "between", "value": "2026-11-03,2026-11-04"}, {2, 3}),
    ({"column": "recorded_at", "op": "lt", "value": "2026-11-04 00:00"}, {1, 2}),
    ({"column": "recorded_at", "op": "le", "value": "2026-11-04 00:00"}, {1, 2, 3}),
    ({"column": "recorded_at", "op": "gt", "value": "2026-11-04 00:00"}, {4}),
    ({"column": "recorded_at", "op": "ge", "value": "2026-11-04"}, {3, 4}),
    ({"column": "recorded_at", "op": "between", "value": "2026-11-03 23:30,2026-11-05 00:00"}, {2, 3}),
    ({"column": "approved", "op": "is_true"}, {1, 3}),
    ({"column": "approved", "op": "is_false"}, {2, 4}),
]


@pytest.mark.parametrize(("raw_filter", "expected"), FILTER_CASES, ids=lambda v: str(v))
def test_each_filter_operator_selects_the_matching_rows(ledger, raw_filter, expected):
    """Every operator of every column type, with values in validate_definition's normal form."""
    ids = _ids(_request(filters=[raw_filter]), ledger.access)
    assert set(ids) == {ledger.ids[n - 1] for n in expected}


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [("eq", 2, {2}), ("ne", 2, {1, 3, 4}), ("lt", 2, {1}), ("le", 2, {1, 2}), ("gt", 3, {4}), ("ge", 3, {3, 4})],
)
def test_integer_filters_compare_numbers(ledger, op, value, expected):
    """Integer comparisons on the entry id (values given as the n-th entry's id)."""
    request = _request(filters=[{"column": "id", "op": op, "value": ledger.ids[value - 1]}])
    assert set(_ids(request, ledger.access)) == {ledger.ids[n - 1] for n in expected}


def test_integer_between_includes_both_ends(ledger):
    """between is inclusive on integers."""
    request = _request(filters=[{"column": "id", "op": "between", "value": [ledger.ids[1], ledger.ids[2]]}])
    assert _ids(request, ledger.access) == ledger.ids[1:3]


def test_a_quote_in_a_filter_value_is_data_not_sql(ledger):
    """A value built to break out of SQL matches nothing and harms nothing."""
    request = _request(filters=[{"column": "note", "op": "eq", "value": "x'); DROP TABLE data_teams; --"}])
    assert _ids(request, ledger.access) == []
    assert db.session.execute(text("SELECT count(*) FROM data_teams")).scalar_one() == 1


def test_filters_combine_with_and(ledger):
    """Several filters must all hold."""
    request = _request(
        filters=[{"column": "project", "op": "eq", "value": "Ward A"}, {"column": "approved", "op": "is_false"}]
    )
    assert _ids(request, ledger.access) == [ledger.ids[3]]


def test_sort_orders_rows_and_the_primary_key_breaks_ties(ledger):
    """Rows come in sort order; rows equal on the sort come in id order, whatever the table's physical order."""
    # An update moves the first row to the end of the heap, so physical order is no longer id order.
    db.session.execute(text("UPDATE data_timesheet_entries SET note = note WHERE id = :id"), {"id": ledger.ids[0]})
    db.session.commit()
    request = _request(sort=[{"column": "approved", "direction": "desc"}])
    assert _ids(request, ledger.access) == [ledger.ids[0], ledger.ids[2], ledger.ids[1], ledger.ids[3]]
    compiled = str(build_select(request, ledger.access))
    assert compiled.endswith("ORDER BY data_timesheet_entries.approved DESC, data_timesheet_entries.id")


def test_descending_sort_on_a_decimal(ledger):
    """Sorting by hours descending gives the largest first."""
    request = _request(sort=[{"column": "hours", "direction": "desc"}])
    assert _ids(request, ledger.access) == [ledger.ids[3], ledger.ids[2], ledger.ids[0], ledger.ids[1]]


def test_without_a_sort_rows_come_in_primary_key_order(ledger):
    """The tie-breaker alone makes the order deterministic."""
    assert str(build_select(_request(), ledger.access)).endswith("ORDER BY data_timesheet_entries.id")


def test_row_limit_caps_rows_and_count(ledger):
    """row_limit keeps the first rows in sort order, and count_rows respects it."""
    request = _request(sort=[{"column": "hours", "direction": "asc"}], row_limit=2)
    assert _ids(request, ledger.access) == [ledger.ids[1], ledger.ids[0]]
    assert count_rows(request, ledger.access) == 2


def test_count_rows_counts_the_filtered_rows(ledger):
    """count_rows gives the number of rows iter_rows yields."""
    request = _request(filters=[{"column": "approved", "op": "is_true"}])
    assert count_rows(request, ledger.access) == 2


def test_columns_come_typed_in_the_requested_order(ledger):
    """iter_rows yields tuples of Python values in the request's column order."""
    request = _request(columns=["approved", "hours", "work_date", "recorded_at", "project"], row_limit=1)
    assert list(iter_rows(request, ledger.access)) == [
        (True, Decimal("7.50"), date(2026, 11, 2), datetime(2026, 11, 2, 18, 0, tzinfo=UTC), "Ward A")
    ]


def test_parameters_become_concrete_date_filters(ledger):
    """A relative range substituted on a given day selects that range's rows only."""
    request = substitute(
        validate_definition(
            {
                "dataset": "timesheet_entries",
                "columns": ["id"],
                "parameters": [{"column": "recorded_at", "range": "yesterday"}],
            },
            1000,
        ),
        date(2026, 11, 4),
    )
    assert _ids(request, ledger.access) == [ledger.ids[1]]


def test_other_workspace_rows_never_appear(world):
    """An administrator of one workspace never sees another workspace's rows."""
    access = current_context(world.workspace.id, world.admin.id)
    notes = [row[0] for row in iter_rows(_request(columns=["note"]), access)]
    assert len(notes) == len(factories.hostile_values())
    assert "other workspace row" not in notes


def test_the_other_workspace_sees_only_its_own_row(world):
    """The outsider's workspace holds exactly its one row."""
    access = current_context(world.other_workspace.id, world.outsider.id)
    assert [row[0] for row in iter_rows(_request(columns=["note"]), access)] == ["other workspace row"]


def test_team_scope_hides_other_teams_rows(world):
    """A member scoped to team A sees team A's rows and none of team B's."""
    access = RequesterContext.of(world.scoped_membership)
    teams = {row[0] for row in iter_rows(_request(columns=["team_id"]), access)}
    assert teams == {world.team_a.id}
    assert count_rows(_request(columns=["team_id"]), access) < len(factories.hostile_values())


def test_empty_team_scope_sees_no_rows(world):
    """A scope of no teams gives no rows at all."""
    membership = factories.make_member(world.workspace, team_scope=[])
    access = RequesterContext.of(membership)
    assert list(iter_rows(_request(), access)) == []
    assert count_rows(_request(), access) == 0


def test_administrator_ignores_a_team_scope(world):
    """Administrators see every team whatever their membership's scope says."""
    access = current_context(world.workspace.id, world.admin.id)
    teams = {row[0] for row in iter_rows(_request(columns=["team_id"]), access)}
    assert teams == {world.team_a.id, world.team_b.id}


def test_member_without_the_dataset_grant_is_denied(world):
    """No grant for the dataset: build_select, iter_rows and count_rows raise AccessDenied."""
    membership = factories.make_member(world.workspace, dataset_grants=["people"])
    access = RequesterContext.of(membership)
    for run in (build_select, iter_rows, count_rows):
        with pytest.raises(AccessDenied):
            run(_request(), access)


@pytest.mark.parametrize(
    "change",
    [
        {"dataset": "payroll"},
        {"columns": ["salary"]},
        {"filters": [{"column": "salary", "op": "eq", "value": 1}]},
        {"sort": [{"column": "salary"}]},
        {"filters": [{"column": "id", "op": "contains", "value": 1}]},
        {"filters": [{"column": "hours", "op": "eq", "value": "x"}]},
    ],
)
def test_unknown_dataset_column_or_operator_is_a_validation_error(ledger, change):
    """A stored request that no longer fits the catalog raises ValidationError."""
    request = FileRequest.from_json({"dataset": "timesheet_entries", "columns": ["id"], **change})
    with pytest.raises(ValidationError):
        build_select(request, ledger.access)
