"""PostgreSQL's plan of the statement a list page runs, for the tests that check a page stays an
index range scan with 100,000 rows behind it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple, TypeVar

from sqlalchemy import event

from app.extensions import db

T = TypeVar("T")


class PlanNode(NamedTuple):
    type: str  # "Index Scan", "Sort", "Nested Loop"…
    relation: str | None  # the table a scan reads


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


def plan_of_page(read_page: Callable[[], T], table: str) -> tuple[list[PlanNode], T]:
    """Read one page; the nodes of PostgreSQL's plan for the paged statement it ran on `table`."""
    with captured_statements() as seen:
        page = read_page()
    statement, parameters = next((sql, p) for sql, p in seen if f"FROM {table}" in sql and "LIMIT" in sql)
    with db.engine.connect() as connection:
        plan = connection.exec_driver_sql("EXPLAIN (FORMAT JSON) " + statement, parameters).scalar_one()
    plan = plan if isinstance(plan, list) else json.loads(plan)
    return _nodes(plan[0]["Plan"]), page


def _nodes(node: dict) -> list[PlanNode]:
    found = [PlanNode(node["Node Type"], node.get("Relation Name"))]
    for child in node.get("Plans", []):
        found.extend(_nodes(child))
    return found
