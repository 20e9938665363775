"""Writes the demo's dataset rows (dataset_rows.py) for a workspace: its shifts, time-off requests
and timesheet entries, the test records' among them.

The timesheet entries are the large dataset (millions with SEED_ROWS): they come in batches and
are streamed with COPY on PostgreSQL, or inserted with executemany elsewhere (SQLite), so memory
stays flat whatever the row count.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from datetime import datetime

from psycopg import sql
from sqlalchemy import Table, insert

from app.extensions import db
from app.models import Shift, TimeOffRequest, TimesheetEntry
from app.seed_data import HOSTILE_VALUES
from app.services.demo.build_workspaces import SeededWorkspace
from app.services.demo.data_rows import SHIFT_COLUMNS, TIME_OFF_COLUMNS, TIMESHEET_COLUMNS
from app.services.demo.dataset_rows import (
    shift_rows,
    shift_rows_of_test_records,
    time_off_rows,
    time_off_rows_of_test_records,
    timesheet_batches,
    timesheet_rows_of_test_records,
)


def add_dataset_rows(rng: random.Random, seeded: SeededWorkspace, rows: int, now: datetime) -> None:
    """The workspace's rows; its timesheet entries are `rows` // its plan's divisor, of which the
    test records' (one per hostile value, all of them if `rows` is as many) are a part."""
    workspace_id, workers, records = seeded.row.id, seeded.workers, seeded.test_records
    today = now.date()
    test_entries = min(rows, len(HOSTILE_VALUES)) if records else 0
    entries = rows // seeded.plan.timesheet_divisor - test_entries
    _insert_rows(
        Shift.__table__,
        SHIFT_COLUMNS,
        [shift_rows(rng, workspace_id, workers, today), shift_rows_of_test_records(workspace_id, records, today)],
    )
    _insert_rows(
        TimeOffRequest.__table__,
        TIME_OFF_COLUMNS,
        [time_off_rows(rng, workspace_id, workers, now), time_off_rows_of_test_records(workspace_id, records, today)],
    )
    _insert_rows(
        TimesheetEntry.__table__,
        TIMESHEET_COLUMNS,
        itertools.chain(
            timesheet_batches(rng, workspace_id, workers, seeded.plan.projects, entries, now),
            [timesheet_rows_of_test_records(workspace_id, records, test_entries, today)],
        ),
    )


def _insert_rows(table: Table, columns: Sequence[str], batches: Iterable[list[tuple]]) -> None:
    """Append rows inside the session's transaction: COPY on PostgreSQL, executemany elsewhere.
    Empty batches are left out (an executemany of no rows would insert one row of defaults).

    One COPY per batch: PostgreSQL queues a foreign-key check per row until its statement ends,
    so a single COPY of millions of rows would hold millions of pending checks in server memory.
    """
    connection = db.session.connection()
    if connection.dialect.name == "postgresql":
        copy_statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table.name), sql.SQL(", ").join(map(sql.Identifier, columns))
        )
        driver = connection.connection.driver_connection
        if driver is None:
            raise RuntimeError("the session's database connection is closed")
        with driver.cursor() as cursor:
            for batch in filter(None, batches):
                with cursor.copy(copy_statement) as copy:
                    for row in batch:
                        copy.write_row(row)
        return
    statement = insert(table)
    for batch in filter(None, batches):
        db.session.execute(statement, [dict(zip(columns, row, strict=True)) for row in batch])
