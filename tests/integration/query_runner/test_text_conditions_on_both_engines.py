"""The text conditions of a filter give the same rows on SQLite (make run) and PostgreSQL.

Each case runs on an in-memory SQLite engine and on the test PostgreSQL database, against a
temporary table of hostile values and LIKE metacharacters; the expected rows are worked out
in Python from the values themselves.
"""

from __future__ import annotations

import pytest
from sqlalchemy import Column as SqlColumn
from sqlalchemy import Integer, MetaData, Table, Text, create_engine, insert, select

from app.data.query_runner import filter_condition
from app.domain.sources.catalog import Column
from app.extensions import letter_lower
from tests.factories import hostile_values

METACHARACTERS = [
    "100%",
    "100 percent",
    "a_b",
    "axb",
    "back\\slash",
    "back slash",
    "slash/ed",
    "slash ed",
    "//",
    "%_\\",
    "50% off",
    "500 off",
    "École",
    "ÉCOLE",
    "ecole",
    "ΣΑΣ",
    "σας",
    "İstanbul",
    "Straße",
    "STRASSE",
    None,
    "",
]
VALUES = [value for value in hostile_values() if "\x00" not in value] + METACHARACTERS
TEXT = Column("value", "Value", "text", "A text column.")

cases = Table(
    "text_condition_cases",
    MetaData(),
    SqlColumn("id", Integer, primary_key=True),
    SqlColumn("value", Text),
    prefixes=["TEMPORARY"],
)


@pytest.fixture(params=["sqlite", "postgresql"])
def connection(request):
    """One connection holding the temporary table, on each engine in turn."""
    if request.param == "sqlite":
        engine = create_engine("sqlite://")
    else:
        engine = create_engine(request.getfixturevalue("test_environment")["DATABASE_URL"])
    with engine.connect() as conn:
        cases.create(conn)
        conn.execute(insert(cases), [{"id": i, "value": v} for i, v in enumerate(VALUES)])
        yield conn
    engine.dispose()


def _ids(connection, op: str, value) -> set[int]:
    condition = filter_condition(cases.c.value, TEXT, op, value)
    return set(connection.execute(select(cases.c.id).where(condition)).scalars())


def _expected(test) -> set[int]:
    return {i for i, v in enumerate(VALUES) if v is not None and test(letter_lower(v))}


@pytest.mark.parametrize("needle", VALUES[:-2], ids=range(len(VALUES) - 2))
def test_is_any_case_finds_each_value_whatever_its_case(connection, needle):
    wanted = letter_lower(needle)
    assert _ids(connection, "ieq", needle.upper()) == _expected(lambda v: v == letter_lower(needle.upper()))
    assert _ids(connection, "ieq", needle) == _expected(lambda v: v == wanted)


@pytest.mark.parametrize("needle", VALUES[:-2], ids=range(len(VALUES) - 2))
def test_contains_finds_the_value_literally_in_any_case(connection, needle):
    part = letter_lower(needle)
    assert _ids(connection, "contains", needle) == _expected(lambda v: part in v)


@pytest.mark.parametrize("needle", VALUES[:-2], ids=range(len(VALUES) - 2))
def test_starts_with_finds_the_value_literally_at_the_start_in_any_case(connection, needle):
    start = letter_lower(needle)
    assert _ids(connection, "starts_with", needle) == _expected(lambda v: v.startswith(start))


@pytest.mark.parametrize(
    ("op", "needle", "found"),
    [
        ("contains", "%", {"100%", "%_\\", "50% off"}),
        ("contains", "_", {"a_b", "%_\\"}),
        ("contains", "\\", {"back\\slash", "%_\\"}),
        ("contains", "/", {"slash/ed", "//"}),
        ("starts_with", "50%", {"50% off"}),
        ("starts_with", "%", {"%_\\"}),
        ("ieq", "a_b", {"a_b"}),
        ("ieq", "école", {"École", "ÉCOLE"}),
        ("ieq", "σασ", {"ΣΑΣ"}),
        ("contains", "STANBUL", {"İstanbul"}),
        ("ieq", "STRASSE", {"STRASSE"}),
    ],
)
def test_like_metacharacters_and_letters_outside_ascii(connection, op, needle, found):
    """Among the values written for these cases (the hostile ones hold slashes and underscores too)."""
    assert {VALUES[i] for i in _ids(connection, op, needle)} & set(METACHARACTERS) == found


def test_is_exactly_keeps_the_case_it_always_had(connection):
    assert {VALUES[i] for i in _ids(connection, "eq", "École")} == {"École"}


def test_rows_without_a_value_match_no_text_comparison(connection):
    absent = VALUES.index(None)
    for op in ("ieq", "contains", "starts_with"):
        assert absent not in _ids(connection, op, "x")


def test_a_value_written_as_sql_is_only_text(connection):
    assert _ids(connection, "contains", "'); DROP TABLE text_condition_cases; --") == set()
    assert len(_ids(connection, "contains", "e")) > 0
