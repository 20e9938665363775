"""iter_rows streams from a server-side cursor on its own connection; preview formats like the CSV."""

from __future__ import annotations

import tracemalloc
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from types import GeneratorType

import pytest
from sqlalchemy import text

from app.data.query_runner import iter_rows, preview_rows
from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.access import RequesterContext, current_context
from app.domain.sources.stored_request import FileRequest
from app.extensions import db
from app.models.types import utcnow
from app.rendering.dates import WorkspaceDates
from app.rendering.neutralise import neutralise
from app.services.sources.saved_queries import Preview, formatted_preview
from tests import factories


def preview(
    definition: dict, access: RequesterContext, limit: int = 50, dates: WorkspaceDates | None = None
) -> Preview:
    """The preview as the queries page gets it: the data layer's rows, formatted by the saved-queries service."""
    return formatted_preview(preview_rows(definition, access, limit=limit), dates or WorkspaceDates())


ROWS = 20_000
REQUEST = FileRequest(
    "timesheet_entries",
    ("id", "person_name", "team_name", "work_date", "hours", "project", "approved", "note", "recorded_at"),
)


@pytest.fixture
def many_rows(app_context):
    """20,000 timesheet entries in one workspace, inserted in one statement; returns the admin's access."""
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin")
    employee = factories.make_team_member(factories.make_team(workspace))
    db.session.execute(
        text(
            "INSERT INTO data_timesheet_entries (workspace_id, team_id, team_name, person_id, person_name,"
            " work_date, hours, project, approved, note, recorded_at)"
            " SELECT :w, :t, 'Team', :p, 'Employee ' || n, DATE '2026-01-01' + n % 300, 7.50,"
            " 'Project ' || n % 17, n % 2 = 0, repeat('note ', 8) || n,"
            " TIMESTAMPTZ '2026-01-01Z' + n * INTERVAL '1 min'"
            " FROM generate_series(1, :rows) AS n"
        ),
        {"w": workspace.id, "t": employee.team_id, "p": employee.id, "rows": ROWS},
    )
    db.session.commit()
    return RequesterContext.of(admin)


def _peak_bytes(consume) -> int:
    tracemalloc.start()
    try:
        consume()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_iter_rows_is_a_lazy_generator(many_rows):
    """iter_rows hands back a generator; nothing is fetched until it is consumed."""
    rows = iter_rows(REQUEST, many_rows)
    assert isinstance(rows, GeneratorType)
    rows.close()


def test_rows_are_fetched_through_a_server_side_cursor(many_rows):
    """While rows stream, the database shows a FETCH from a declared cursor on another connection."""
    rows = iter_rows(REQUEST, many_rows, batch_size=1000)
    next(rows)
    activity = (
        db.session.execute(
            text(
                "SELECT query FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND query LIKE 'FETCH FORWARD %'"
            )
        )
        .scalars()
        .all()
    )
    rows.close()
    assert len(activity) == 1


def test_memory_while_streaming_stays_far_below_holding_every_row(many_rows):
    """Streaming 20,000 rows peaks at a fraction of what the same rows take when held all at once."""
    held = _peak_bytes(lambda: list(iter_rows(REQUEST, many_rows)))
    streamed = _peak_bytes(lambda: sum(1 for _ in iter_rows(REQUEST, many_rows, batch_size=500)))
    assert streamed < held / 5


def test_streaming_survives_commits_on_the_session(many_rows):
    """Committing on db.session while rows flow (as progress recording does) does not break the stream."""
    seen = 0
    for seen, _row in enumerate(iter_rows(REQUEST, many_rows, batch_size=1000), start=1):
        if seen % 5000 == 0:
            db.session.execute(text("SELECT 1"))
            db.session.commit()
    assert seen == ROWS


def test_preview_formats_cells_as_the_csv_export_and_dates_as_the_workspace(world):
    """Preview cells are strings: neutralised text, decimals with their scale and true/false as the
    CSV export writes them; dates in the workspace's format, times on its clocks with the zone named."""
    access = current_context(world.workspace.id, world.admin.id)
    definition = {
        "dataset": "timesheet_entries",
        "columns": ["note", "hours", "work_date", "approved", "recorded_at"],
        "sort": [{"column": "id", "direction": "asc"}],
    }
    result = preview(definition, access, dates=WorkspaceDates("%d/%m/%Y", "UTC"))
    assert [c.name for c in result.columns] == definition["columns"]
    assert [row[0] for row in result.rows] == [neutralise(v) for v in factories.hostile_values()]
    assert result.rows[0][1:] == ["7.50", "02/11/2026", "true", "02/11/2026 18:00 UTC"]


def test_preview_counts_every_matching_row_and_those_a_file_holds(world):
    """The first rows shown, and the total the person may read; a row limit caps the file's count."""
    access = current_context(world.workspace.id, world.admin.id)
    definition = {"dataset": "timesheet_entries", "columns": ["id"]}
    everything = preview(definition, access, limit=2)
    limited = preview({**definition, "row_limit": 3}, access, limit=2)
    assert everything.total == len(factories.hostile_values())
    assert (everything.file_rows, len(everything.rows)) == (everything.total, 2)
    assert (limited.total, limited.file_rows) == (everything.total, 3)


def test_preview_total_counts_only_the_persons_own_rows(world):
    access = RequesterContext.of(world.scoped_membership)
    result = preview({"dataset": "timesheet_entries", "columns": ["team_name"]}, access, limit=1)
    assert result.total == len(preview({"dataset": "timesheet_entries", "columns": ["team_name"]}, access).rows)
    assert (
        result.total
        < preview(
            {"dataset": "timesheet_entries", "columns": ["id"]}, current_context(world.workspace.id, world.admin.id)
        ).total
    )


def test_preview_shows_at_most_the_limit(world):
    """The preview stops at its limit, and at the query's own row limit when that is smaller."""
    access = current_context(world.workspace.id, world.admin.id)
    definition = {"dataset": "timesheet_entries", "columns": ["id"]}
    assert len(preview(definition, access, limit=5).rows) == 5
    assert len(preview({**definition, "row_limit": 3}, access, limit=5).rows) == 3


def test_preview_substitutes_parameters_with_today(world):
    """A "today" range on the date column keeps only rows worked today (UTC)."""
    today = utcnow().date()
    factories.make_timesheet_entry(world.employees[0], work_date=today, note="worked today")
    factories.make_timesheet_entry(world.employees[0], work_date=today - timedelta(days=10), note="long ago")
    access = current_context(world.workspace.id, world.admin.id)
    definition = {
        "dataset": "timesheet_entries",
        "columns": ["note"],
        "parameters": [{"column": "work_date", "range": "today"}],
    }
    assert preview(definition, access).rows == [["worked today"]]


def test_preview_applies_the_persons_own_scope(world):
    """A member scoped to team A previews team A's rows only."""
    access = RequesterContext.of(world.scoped_membership)
    rows = preview({"dataset": "timesheet_entries", "columns": ["team_name"]}, access).rows
    assert {row[0] for row in rows} == {"Team A"}


def test_preview_refuses_a_dataset_without_a_grant(world):
    """A member without the dataset grant gets AccessDenied, not rows."""
    access = RequesterContext.of(factories.make_member(world.workspace, dataset_grants=["teams"]))
    with pytest.raises(AccessDenied):
        preview({"dataset": "timesheet_entries", "columns": ["id"]}, access)


def test_preview_validates_the_definition(world):
    """A definition with a badly typed filter value raises ValidationError."""
    access = current_context(world.workspace.id, world.admin.id)
    definition = {"dataset": "timesheet_entries", "columns": ["id"], "filters": [{"column": "hours", "op": "gt"}]}
    with pytest.raises(ValidationError):
        preview(definition, access)


def test_preview_datetime_is_on_the_workspace_clocks_with_the_zone_named(world):
    """A datetime stored with another offset is shown on the workspace zone's clocks."""
    moment = datetime(2026, 5, 2, 1, 30, tzinfo=timezone(timedelta(hours=2)))
    factories.make_timesheet_entry(world.employees[0], recorded_at=moment, hours=Decimal("0.25"), note="late")
    access = current_context(world.workspace.id, world.admin.id)
    definition = {
        "dataset": "timesheet_entries",
        "columns": ["recorded_at", "hours"],
        "filters": [{"column": "note", "op": "eq", "value": "late"}],
    }
    dates = WorkspaceDates("%Y-%m-%d", "America/New_York")
    assert preview(definition, access, dates=dates).rows == [["2026-05-01 19:30 America/New_York", "0.25"]]
