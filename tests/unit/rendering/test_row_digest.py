"""The digest "only when the rows changed" compares: of the rows as they stream, in order, with
their columns; never dependent on how the rows were cut into pieces."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

from app.domain.sources.catalog import Column
from app.rendering.row_digest import RowDigest

COLUMNS = [
    Column("person", "Person", "text", ""),
    Column("hours", "Hours", "decimal", ""),
    Column("day", "Day", "date", ""),
    Column("approved_at", "Approved", "datetime", ""),
]
ROWS = [
    ("Zoë", Decimal("7.50"), date(2026, 12, 1), datetime(2026, 12, 1, 17, 0, tzinfo=UTC)),
    ("=1+1", Decimal("0"), date(2026, 12, 2), None),
    (None, None, None, datetime(2026, 12, 3, 9, 30, tzinfo=UTC)),
]


def digest_of(rows, columns=COLUMNS, pieces=(len(ROWS),)) -> str:
    digest = RowDigest(columns)
    start = 0
    for size in pieces:
        assert list(digest.typed_rows(rows[start : start + size])) == list(rows[start : start + size])
        start += size
    list(digest.typed_rows(rows[start:]))
    return digest.hexdigest()


def test_rows_fed_in_chunks_give_the_digest_of_the_rows_in_one_piece():
    whole = digest_of(ROWS)

    assert digest_of(ROWS, pieces=(1, 1, 1)) == whole
    assert digest_of(ROWS, pieces=(2,)) == whole
    assert digest_of(ROWS, pieces=(0, 3)) == whole


def test_records_fed_in_batches_give_the_digest_of_the_records_in_one_piece():
    records = [b'"a",1\n', b'"b,\nc",2\n', b'"d",3\n']
    whole, batched = RowDigest(COLUMNS[:2]), RowDigest(COLUMNS[:2])
    list(whole.record_batches([records]))
    list(batched.record_batches([records[:1], [memoryview(record) for record in records[1:]]]))

    assert batched.hexdigest() == whole.hexdigest()


OTHER_VALUES = ("something else", Decimal("99"), date(2000, 1, 1), datetime(2000, 1, 1, tzinfo=UTC))


def test_any_changed_value_changes_the_digest():
    for row_index, row in enumerate(ROWS):
        for column_index in range(len(row)):
            changed = list(row)
            changed[column_index] = OTHER_VALUES[column_index]
            rows = [*ROWS[:row_index], tuple(changed), *ROWS[row_index + 1 :]]
            assert digest_of(rows) != digest_of(ROWS), (row_index, column_index)


def test_a_value_of_another_type_with_the_same_text_changes_the_digest():
    assert digest_of([("1", Decimal("7.5"), None, None)]) != digest_of([("1", Decimal("7.50"), None, None)])
    assert digest_of([("", None, None, None)]) != digest_of([(None, None, None, None)])


def test_the_same_rows_in_another_order_change_the_digest():
    assert digest_of(list(reversed(ROWS))) != digest_of(ROWS)


def test_a_row_more_or_less_changes_the_digest():
    assert digest_of(ROWS[:2]) != digest_of(ROWS)
    assert digest_of([*ROWS, ROWS[-1]]) != digest_of(ROWS)


def test_another_column_or_the_columns_in_another_order_change_the_digest():
    renamed = [Column("worker", "Person", "text", ""), *COLUMNS[1:]]
    swapped_rows = [(row[1], row[0], row[2], row[3]) for row in ROWS]
    swapped_columns = [COLUMNS[1], COLUMNS[0], *COLUMNS[2:]]

    assert digest_of(ROWS, columns=renamed) != digest_of(ROWS)
    assert digest_of(swapped_rows, columns=swapped_columns) != digest_of(ROWS)


def test_a_cell_split_differently_across_columns_changes_the_digest():
    two = [Column("a", "A", "text", ""), Column("b", "B", "text", "")]
    assert digest_of([("ab", "c")], columns=two) != digest_of([("a", "bc")], columns=two)


def test_a_time_stamp_gives_one_digest_whatever_zone_it_was_read_in():
    in_utc = [("x", None, None, datetime(2026, 12, 1, 17, 0, tzinfo=UTC))]
    in_berlin = [("x", None, None, datetime(2026, 12, 1, 18, 0, tzinfo=timezone(timedelta(hours=1))))]

    assert digest_of(in_berlin) == digest_of(in_utc)
