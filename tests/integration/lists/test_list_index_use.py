"""With 100,000 files behind a person's list, each page is read through an index in the list's order:
PostgreSQL's plan for the very statement the Files list runs has an index scan and no Sort node."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from sqlalchemy import event, text

from app.domain.access import current_context
from app.extensions import db
from app.models.types import utcnow
from app.services import file_library, list_pages
from app.services.file_library import FILE_LIST
from tests import factories

FILES = 100_000


@pytest.fixture
def crowded(world):
    """100,000 files of the member, one INSERT … SELECT generate_series, statistics refreshed."""
    query = factories.make_query(world.workspace, world.member, name="Hours export")
    # The table starts fresh, as one loaded once: the tests before emptied it with DELETE, which
    # leaves the dead rows (100,000 of them after this test) in its pages until a vacuum.
    db.session.execute(text("TRUNCATE query_exports CASCADE"))
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


@contextmanager
def captured_statements() -> Iterator[list[tuple[str, object]]]:
    """The SQL and parameters of every statement run inside the block."""
    seen: list[tuple[str, object]] = []

    def remember(conn, cursor, statement, parameters, context, executemany):
        seen.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", remember)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", remember)


def _plan_of_page(world, **args) -> tuple[list[str], object]:
    """Run one page of the member's Files list; PostgreSQL's plan of the statement it ran, as node types."""
    request = list_pages.read_request(FILE_LIST, args)
    access = current_context(world.workspace.id, world.member.id)
    with captured_statements() as seen:
        page = file_library.page_files(access, request, utcnow())
    statement, parameters = next((sql, p) for sql, p in seen if "FROM query_exports" in sql and "LIMIT" in sql)
    with db.engine.connect() as connection:
        plan = connection.exec_driver_sql("EXPLAIN (FORMAT JSON) " + statement, parameters).scalar_one()
    plan = plan if isinstance(plan, list) else json.loads(plan)
    return _node_types(plan[0]["Plan"]), page


def _node_types(node: dict) -> list[str]:
    found = [node["Node Type"]]
    for child in node.get("Plans", []):
        found.extend(_node_types(child))
    return found


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
