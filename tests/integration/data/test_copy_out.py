"""COPY rows gathered by C calls: every row once and in order, in batches of the size asked for, the
COPY's error raised at its end, and the connection usable afterwards however the reading ended."""

from __future__ import annotations

import psycopg
import pytest

from app.data.copy_out import copy_batches
from app.extensions import db

NOTES = "COPY (SELECT g, %(note)s || g FROM generate_series(1, %(rows)s) g) TO STDOUT WITH (FORMAT csv)"


@pytest.fixture
def connection(app_context):
    raw = db.engine.raw_connection()
    try:
        yield raw.driver_connection
    finally:
        raw.close()


def _one_at_a_time(connection: psycopg.Connection, sql: str, params) -> list[bytes]:
    with connection.cursor() as cursor, cursor.copy(sql, params) as copy:
        return [bytes(row) for row in copy]


def test_every_row_arrives_once_in_order_as_psycopg_reads_it(connection):
    params = {"note": 'two\nlines, "quoted" ', "rows": 30_000}

    with connection.cursor() as cursor:
        batches = list(copy_batches(cursor, NOTES, params, 1000))

    assert [bytes(row) for batch in batches for row in batch] == _one_at_a_time(connection, NOTES, params)
    assert [len(batch) for batch in batches] == [1000] * 30


def test_the_last_batch_holds_what_is_left(connection):
    with connection.cursor() as cursor:
        sizes = [len(batch) for batch in copy_batches(cursor, NOTES, {"note": "x", "rows": 2500}, 1000)]

    assert sizes == [1000, 1000, 500]


def test_rows_stay_valid_while_they_are_held(connection):
    with connection.cursor() as cursor:
        held = [row for batch in copy_batches(cursor, NOTES, {"note": "n", "rows": 5000}, 100) for row in batch]

    assert bytes(held[0]) == b"1,n1\n" and bytes(held[-1]) == b"5000,n5000\n"


def test_an_error_in_the_copy_is_raised_and_the_connection_rolls_back(connection):
    failing = "COPY (SELECT 1 / (g - 40000) FROM generate_series(1, 50000) g) TO STDOUT"

    with connection.cursor() as cursor, pytest.raises(psycopg.errors.DivisionByZero):
        for _ in copy_batches(cursor, failing, None, 1000):
            pass

    connection.rollback()
    assert connection.execute("SELECT 42").fetchone() == (42,)


def test_leaving_early_ends_the_copy_and_the_connection_serves_the_next_statement(connection):
    with connection.cursor() as cursor:
        batches = copy_batches(cursor, NOTES, {"note": "x", "rows": 1_000_000}, 1000)
        assert len(next(batches)) == 1000
        batches.close()
        assert connection.info.transaction_status != psycopg.pq.TransactionStatus.ACTIVE

    connection.rollback()
    assert connection.execute("SELECT 43").fetchone() == (43,)


def test_leaving_at_the_last_batch_leaves_the_connection_usable(connection):
    with connection.cursor() as cursor:
        batches = copy_batches(cursor, NOTES, {"note": "x", "rows": 2500}, 1000)
        assert [len(next(batches)) for _ in range(3)] == [1000, 1000, 500]
        batches.close()

    connection.rollback()
    assert connection.execute("SELECT 44").fetchone() == (44,)
