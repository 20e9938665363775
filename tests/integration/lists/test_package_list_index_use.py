"""With 100,000 packages behind a workspace's package list, each page is read through an index in
the list's order: PostgreSQL's plan for the very statement the list runs reads the packages by an
index scan, sorts nothing and scans neither the packages nor their executions sequentially."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from app.extensions import db
from app.models.types import utcnow
from app.services.pages import list_pages
from app.services.workspace_export import package_history
from app.services.workspace_export.package_history import PACKAGE_LIST
from tests.integration.lists.plans import plan_of_page

PACKAGES = 100_000


@pytest.fixture
def crowded(world):
    """100,000 succeeded executions of the workspace, each with its package (a tenth expired, every
    other one JSON Lines), two INSERT … SELECT generate_series, statistics refreshed."""
    start = utcnow() - timedelta(days=400)
    # Loaded afresh: the DELETE before each test leaves an earlier load's dead rows until a vacuum.
    db.session.execute(text("TRUNCATE data_export_executions CASCADE"))
    db.session.execute(
        text(
            "INSERT INTO data_export_executions (workspace_id, trigger, requested_by_id, cutoff_at,"
            " settings_snapshot, allowance_used, allowance_limit, status, attempt_count, datasets_count, rows_written,"
            " bytes_written, volumes_count, created_at)"
            " SELECT :workspace_id, 'manual', :person_id, CAST(:start AS timestamptz) + g * interval '1 minute',"
            " CAST('{}' AS json), 1, 10, 'succeeded', 1, 5, 0, 0, 1,"
            " CAST(:start AS timestamptz) + g * interval '1 minute'"
            " FROM generate_series(1, :count) AS g"
        ),
        {"workspace_id": world.workspace.id, "person_id": world.admin.id, "start": start, "count": PACKAGES},
    )
    db.session.execute(
        text(
            "INSERT INTO data_export_artifacts (uid, workspace_id, execution_id, status, format, cutoff_at, prefix,"
            " manifest_key, manifest_size, manifest_sha256, datasets_count, row_count, size_bytes, volumes_count,"
            " retention_days, expires_at, created_at)"
            " SELECT 'bulk-' || e.id, e.workspace_id, e.id,"
            " CASE WHEN e.id % 10 = 0 THEN 'available' ELSE 'expired' END,"
            " CASE WHEN e.id % 2 = 0 THEN 'csv' ELSE 'jsonl' END, e.cutoff_at, 'packages/bulk-' || e.id || '/',"
            " 'packages/bulk-' || e.id || '/manifest.json', 0, repeat('0', 64), 5, 0, 0, 1, 7,"
            " e.created_at + interval '7 days', e.created_at"
            " FROM data_export_executions AS e WHERE e.workspace_id = :workspace_id"
        ),
        {"workspace_id": world.workspace.id},
    )
    db.session.commit()
    with db.engine.begin() as connection:
        connection.execute(text("ANALYZE data_export_executions"))
        connection.execute(text("ANALYZE data_export_artifacts"))
    return world


def _read(world, **args):
    request = list_pages.read_request(PACKAGE_LIST, args)
    return lambda: package_history.page_packages(world.workspace.id, request)


@pytest.mark.parametrize(
    "args",
    [{}, {"sort": "oldest"}, {"status": "available"}, {"format": "jsonl", "sort": "oldest"}],
    ids=["newest", "oldest", "available", "jsonl-oldest"],
)
def test_first_and_later_pages_use_an_index_and_never_sort_the_packages(crowded, args):
    """The first page and a page two cursors deep: an index scan in the list's order, no Sort node."""
    cursor = _read(crowded, **args)().next_cursor
    cursor = _read(crowded, **args, after=cursor)().next_cursor
    for page_args in (args, {**args, "after": cursor}):
        plan, page = plan_of_page(_read(crowded, **page_args), "data_export_artifacts")
        types = [node.type for node in plan]
        assert ("Index Scan", "data_export_artifacts") in plan or ("Index Only Scan", "data_export_artifacts") in plan
        assert "Sort" not in types and "Incremental Sort" not in types, plan
        # The executions are read by their primary key per row; the few people may be read whole.
        assert ("Seq Scan", "data_export_artifacts") not in plan and ("Seq Scan", "data_export_executions") not in plan
        assert len(page.rows) == list_pages.PAGE_SIZE
