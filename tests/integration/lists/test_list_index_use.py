"""With 100,000 files behind a person's list, each page is read through an index in the list's order:
PostgreSQL's plan for the very statement the Files list runs has an index scan and no Sort node.
The same holds for the staff console's files list over every workspace, and for the audit log."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

import pytest
from sqlalchemy import text

from app.domain.people.access import current_context
from app.extensions import db
from app.models.types import utcnow
from app.services.files import file_library
from app.services.files.file_library import FILE_LIST
from app.services.pages import list_pages
from app.services.staff import staff_lists
from app.services.workspace import audit_log
from tests import factories
from tests.integration.lists.plans import plan_of_page

FILES = 100_000
EVENTS = 50_000
T = TypeVar("T")


@pytest.fixture
def crowded(world):
    """100,000 files of the member, one INSERT … SELECT generate_series, statistics refreshed."""
    query = factories.make_query(world.workspace, world.member, name="Hours export")
    _fill(
        "query_exports",
        (
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
        workspace_id=world.workspace.id,
        person_id=world.member.id,
        query_id=query.id,
        start=utcnow() - timedelta(days=30),
        count=FILES,
    )
    return world


def _fill(table: str, insert: str, **parameters) -> None:
    """Load `table` afresh with a bulk INSERT … SELECT, commit, and refresh its statistics for the planner.

    Afresh, as a table loaded once: the DELETE that empties the tables before each test leaves the
    dead rows of an earlier load in the table's pages until a vacuum, and the plans would see them.
    """
    db.session.execute(text(f"TRUNCATE {table} CASCADE"))
    db.session.execute(text(insert), parameters)
    db.session.commit()
    with db.engine.begin() as connection:
        connection.execute(text(f"ANALYZE {table}"))


def _plan_of_page(world, **args) -> tuple[list[str], object]:
    """Run one page of the member's Files list; PostgreSQL's plan of the statement it ran, as node types."""
    request = list_pages.read_request(FILE_LIST, args)
    access = current_context(world.workspace.id, world.member.id)
    return _plan_of(lambda: file_library.page_files(access, request, utcnow()), "query_exports")


def _plan_of(read_page: Callable[[], T], table: str) -> tuple[list[str], T]:
    """Read one page; the node types of PostgreSQL's plan for the paged statement it ran on `table`."""
    plan, page = plan_of_page(read_page, table)
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


@pytest.mark.parametrize(
    "args",
    [{}, {"status": "failed"}, {"workspace": "WORKSPACE"}, {"since": "2000-01-01"}],
    ids=["all", "failed", "one-workspace", "since"],
)
def test_the_staff_files_list_reads_a_page_deep_in_100000_files_through_an_index(crowded, args):
    files = staff_lists.LISTS["files"]
    args = {name: str(crowded.workspace.id) if value == "WORKSPACE" else value for name, value in args.items()}
    first = staff_lists.list_page(files, list_pages.read_request(files.spec, args))
    request = list_pages.read_request(files.spec, {**args, "after": first.next_cursor})

    nodes, page = _plan_of(lambda: staff_lists.list_page(files, request), "query_exports")

    assert "Sort" not in nodes and "Incremental Sort" not in nodes, nodes
    assert any(node in ("Index Scan", "Index Only Scan") for node in nodes), nodes
    assert len(page.rows) == staff_lists.PAGE_SIZE


@pytest.fixture
def long_audit_log(world):
    """50,000 audit events of the workspace, many at the same moment (ties the id breaks)."""
    _fill(
        "audit_events",
        (
            "INSERT INTO audit_events (workspace_id, actor_id, action, subject_type, subject_id, reason, details,"
            " created_at)"
            " SELECT :workspace_id, :actor_id, CASE WHEN g % 3 = 0 THEN 'schedule.deleted' ELSE 'schedule.paused' END,"
            " 'schedule', g, 'reason ' || g, CAST('{}' AS json),"
            " CAST(:start AS timestamptz) + (g / 4) * interval '1 second'"
            " FROM generate_series(1, :count) AS g"
        ),
        workspace_id=world.workspace.id,
        actor_id=world.admin.id,
        start=utcnow() - timedelta(days=5),
        count=EVENTS,
    )
    return world


@pytest.mark.parametrize("args", [{}, {"action": "schedule.deleted"}], ids=["all", "one-action"])
def test_the_audit_log_reads_a_page_deep_in_50000_events_through_its_index(long_audit_log, args):
    access = current_context(long_audit_log.workspace.id, long_audit_log.admin.id)
    first = audit_log.page(access, list_pages.read_request(audit_log.AUDIT_LIST, args))
    request = list_pages.read_request(audit_log.AUDIT_LIST, {**args, "after": first.next_cursor})

    nodes, page = _plan_of(lambda: audit_log.page(access, request), "audit_events")

    assert "Sort" not in nodes and "Incremental Sort" not in nodes, nodes
    assert any(node in ("Index Scan", "Index Only Scan") for node in nodes), nodes
    assert len(page.rows) == audit_log.AUDIT_LIST.page_size
