"""Reading a list's query string (list_pages.read_request) and the literal search condition, without a database."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import column
from sqlalchemy.dialects import postgresql, sqlite

from app.services.pages import list_pages
from app.services.pages.list_pages import ListFilter, ListSpec, SortOrder, contains_text

SPEC = ListSpec(
    name="things",
    sorts={"name": SortOrder("Name", (column("name"), column("id")), (list_pages.TEXT, list_pages.NUMBER))},
    filters={
        "colour": ListFilter("Colour", {"red": "Red", "blue": "Blue"}),
        "owner": ListFilter("Owner", kind=list_pages.NUMBER),
        "code": ListFilter("Code", kind=list_pages.TEXT),
        "since": ListFilter("From", kind=list_pages.DAY),
    },
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


def test_an_id_a_text_and_a_day_are_read_in_their_kind():
    request = list_pages.read_request(SPEC, {"owner": " 0042 ", "code": "  stalled ", "since": "2026-11-01"})

    assert dict(request.filters) == {"owner": "42", "code": "stalled", "since": "2026-11-01"}
    assert (request.number("owner"), request.day("since")) == (42, date(2026, 11, 1))
    assert request.notices == ()


@pytest.mark.parametrize(
    ("name", "value"),
    [("owner", "1 OR 1=1"), ("owner", "99999999999"), ("owner", "-3"), ("since", "yesterday"), ("since", "2026-02-30")],
)
def test_an_unreadable_id_or_day_is_ignored_and_said(name, value):
    request = list_pages.read_request(SPEC, {name: value})

    assert dict(request.filters) == {} and len(request.notices) == 1


def test_a_text_filter_is_cut_to_its_limit_and_said():
    request = list_pages.read_request(SPEC, {"code": "c" * 500})

    assert len(request.filters["code"]) == list_pages.FILTER_TEXT_LIMIT and request.notices


def test_a_list_without_searched_columns_reads_no_search():
    spec = ListSpec(name="plain", sorts=SPEC.sorts, filters={}, search_columns=())

    assert list_pages.read_request(spec, {"q": "ward"}).search == ""


def test_like_wildcards_and_the_escape_character_are_escaped_in_the_pattern():
    condition = contains_text([column("name")], "50%_a\\b")

    for dialect in (postgresql.dialect(), sqlite.dialect()):
        compiled = condition.compile(dialect=dialect)
        assert list(compiled.params.values()) == ["%50\\%\\_a\\\\b%"]
        assert "ESCAPE" in str(compiled)
