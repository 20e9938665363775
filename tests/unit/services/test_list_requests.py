"""Reading a list's query string (list_pages.read_request) and the literal search condition, without a database."""

from __future__ import annotations

from sqlalchemy import column
from sqlalchemy.dialects import postgresql, sqlite

from app.services import list_pages
from app.services.list_pages import ListFilter, ListSpec, SortOrder, contains_text

SPEC = ListSpec(
    name="things",
    sorts={"name": SortOrder("Name", (column("name"), column("id")), (list_pages.TEXT, list_pages.NUMBER))},
    filters={"colour": ListFilter("Colour", {"red": "Red", "blue": "Blue"})},
    search_columns=(column("name"),),
)


def test_known_values_are_kept_and_the_cursor_passed_on():
    request = list_pages.read_request(SPEC, {"q": "  ward  ", "colour": "red", "sort": "name", "after": "abc"})

    assert (request.search, dict(request.filters), request.sort, request.cursor, request.notices) == (
        "ward",
        {"colour": "red"},
        "name",
        "abc",
        (),
    )


def test_unknown_filter_and_order_are_ignored_and_each_said():
    request = list_pages.read_request(SPEC, {"colour": "green", "sort": "random"})

    assert (dict(request.filters), request.sort) == ({}, "name")
    assert len(request.notices) == 2


def test_nul_is_left_out_of_a_search_and_said():
    request = list_pages.read_request(SPEC, {"q": "wa\x00rd"})

    assert request.search == "ward" and request.notices


def test_long_search_is_cut_to_its_limit_and_said():
    request = list_pages.read_request(SPEC, {"q": "x" * 500})

    assert len(request.search) == list_pages.SEARCH_LIMIT and request.notices


def test_params_leave_out_empty_values_and_take_changes():
    request = list_pages.read_request(SPEC, {"q": "ward", "after": "abc"})

    assert request.params(after=None) == {"q": "ward", "sort": "name"}
    assert request.params(after="next") == {"q": "ward", "sort": "name", "after": "next"}


def test_like_wildcards_and_the_escape_character_are_escaped_in_the_pattern():
    condition = contains_text([column("name")], "50%_a\\b")

    for dialect in (postgresql.dialect(), sqlite.dialect()):
        compiled = condition.compile(dialect=dialect)
        assert list(compiled.params.values()) == ["%50\\%\\_a\\\\b%"]
        assert "ESCAPE" in str(compiled)
