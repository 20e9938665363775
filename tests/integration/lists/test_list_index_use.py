"""With 100,000 files behind a person's list, each page is read through an index in the list's order:
PostgreSQL's plan for the very statement the Files list runs has an index scan and no Sort node."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from app.domain.access import current_context
from app.extensions import db
from app.models.types import utcnow
from app.services import file_library, list_pages
from app.services.file_library import FILE_LIST
from tests import factories
from tests.integration.lists.plans import plan_of_page

FILES = 100_000


@pytest.fixture
def crowded(world):
    """100,000 files of the member, one INSERT … SELECT generate_series, statistics refreshed."""
    query = factories.make_query(world.workspace, world.member, name="Hours export")
    db.session.execute(
        text(
            "INSERT INTO query_exports (workspace_id, requester_id, kind, source_query_id, source_name,"
            " source_version, dataset, request, format, heading, include_descriptions, exact_values, time_zone,"
            " status, failure_code, storage_key, file_name, rows_written, attempt_count, requested_at)"
            " SELECT :workspace_id, :person_id, 'query', :query_id, 'Export ' || g, 1, 'timesheet_entries',"
            " CAST('{}' AS json), CASE WHEN g % 2 = 0 THEN 'csv' ELSE 'xlsx' END, 'names', false, false, 'UTC',"
            " CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'queued' END,"
            " CASE WHEN g % 10 = 0 THEN 'timeout' END, 'files/bulk-' || g, 'export-' || g || '.csv',"
            " 0, 0, CAST(:start AS timestamptz) + g * interval '1 second'"
            " FROM generate_series(1, :count) AS g"
        ),
        {
            "workspace_id": world.workspace.id,
            "person_id": world.member.id,
            "query_id": query.id,
            "start": utcnow() - timedelta(days=30),
            "count": FILES,
        },
    )
    db.session.commit()
    with db.engine.begin() as connection:
        connection.execute(text("ANALYZE query_exports"))
    return world


def _plan_of_page(world, **args) -> tuple[list[str], object]:
    """Run one page of the member's Files list; PostgreSQL's plan of the statement it ran, as node types."""
    request = list_pages.read_request(FILE_LIST, args)
    access = current_context(world.workspace.id, world.member.id)
    plan, page = plan_of_page(lambda: file_library.page_files(access, request, utcnow()), "query_exports")
    return [node.type for node in plan], page


def _next_cursor(world, **args) -> str:
    request = list_pages.read_request(FILE_LIST, args)
    page = file_library.page_files(current_context(world.workspace.id, world.member.id), request, utcnow())
    assert page.next_cursor
    return page.next_cursor


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"sort": "oldest"},
        {"sort": "name"},
        {"status": "failed"},
        {"status": "queued", "format": "csv"},
    ],
    ids=["newest", "oldest", "name", "failed", "queued-csv"],
)
def test_first_and_later_pages_use_an_index_and_never_sort_the_table(crowded, args):
    """The first page and a page two cursors deep: an index scan in the list's order, no Sort node."""
    cursor = _next_cursor(crowded, **args)
    cursor = _next_cursor(crowded, **args, after=cursor)
    for page_args in (args, {**args, "after": cursor}):
        nodes, page = _plan_of_page(crowded, **page_args)
        assert any(node in ("Index Scan", "Index Only Scan") for node in nodes), nodes
        assert "Sort" not in nodes and "Incremental Sort" not in nodes, nodes
        assert "Seq Scan" not in nodes, nodes
        assert len(page.rows) == list_pages.PAGE_SIZE
