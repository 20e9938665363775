"""The list pages over HTTP: the search form without JavaScript, htmx search, hostile searches, forged page links."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from urllib.parse import quote

import pytest

from app.extensions import db
from app.models.types import utcnow
from app.services.pages import list_pages
from tests import factories


@pytest.fixture
def signed_in(client, auth, world):
    auth.login(world.member.email)
    return client


def _files(world, count: int, name: str = "Export"):
    query = factories.make_query(world.workspace, world.member, name=f"{name} query")
    return [
        factories.make_export(
            query, world.member, source_name=f"{name} {n:02d}", requested_at=utcnow() - timedelta(minutes=n)
        )
        for n in range(count)
    ]


def _next_link(page: str) -> str:
    match = re.search(r'<a class="button" rel="next" href="([^"]+)"', page)
    assert match, "no next-page link"
    return html.unescape(match.group(1))


def _previous_link(page: str) -> str:
    match = re.search(r'<a class="button" rel="prev" href="([^"]+)"', page)
    assert match, "no previous-page link"
    return html.unescape(match.group(1))


def _position(page: str) -> str:
    return re.search(r'<span class="pager-position">([^<]+)</span>', page).group(1)


def _file_ids(page: str) -> list[int]:
    return [int(found) for found in re.findall(r'href="/w/\d+/files/(\d+)"', page)]


def test_files_page_has_a_plain_get_search_form_and_a_plain_next_link(signed_in, world):
    """Without JavaScript: the form is a GET to the page itself; the next link is a plain URL giving page two."""
    files = _files(world, 30)
    first = signed_in.get(f"/w/{world.workspace.id}/files/").get_data(as_text=True)

    assert re.search(r'<form class="list-controls" method="get" action="/w/\d+/files/"', first)
    assert _file_ids(first) == [export.id for export in files[:25]]
    second = signed_in.get(_next_link(first))
    assert second.status_code == 200
    assert _file_ids(second.get_data(as_text=True)) == [export.id for export in files[25:]]


def test_the_pager_says_where_the_page_is_and_leads_back_with_previous(signed_in, world):
    """60 files: "1–25 of 60", "26–50 of 60", "51–60 of 60"; Previous from there gives 26–50 again, then 1–25."""
    files = _files(world, 60)
    first = signed_in.get(f"/w/{world.workspace.id}/files/").get_data(as_text=True)
    second = signed_in.get(_next_link(first)).get_data(as_text=True)
    third = signed_in.get(_next_link(second)).get_data(as_text=True)

    back_to_second = signed_in.get(_previous_link(third)).get_data(as_text=True)
    back_to_first = signed_in.get(_previous_link(back_to_second)).get_data(as_text=True)

    assert [_position(page) for page in (first, second, third)] == ["1–25 of 60", "26–50 of 60", "51–60 of 60"]
    assert 'rel="prev"' not in first and 'rel="next"' not in third
    assert _file_ids(back_to_second) == [export.id for export in files[25:50]]
    assert _position(back_to_second) == "26–50 of 60" and 'rel="next"' in back_to_second
    assert _file_ids(back_to_first) == [export.id for export in files[:25]]
    assert _position(back_to_first) == "1–25 of 60" and 'rel="prev"' not in back_to_first


def test_previous_from_a_page_whose_earlier_rows_went_shows_the_whole_first_page(signed_in, world):
    """Rows before page two were deleted meanwhile: Previous shows the first page full, not a short one."""
    files = _files(world, 30)
    second = signed_in.get(_next_link(signed_in.get(f"/w/{world.workspace.id}/files/").get_data(as_text=True)))
    second_page = second.get_data(as_text=True)
    for export in files[:20]:
        db.session.delete(export)
    db.session.commit()

    previous = signed_in.get(_previous_link(second_page)).get_data(as_text=True)

    assert _file_ids(previous) == [export.id for export in files[20:30]]
    assert _position(previous) == "1–10 of 10" and 'rel="prev"' not in previous


def test_the_position_counts_only_what_the_search_finds(signed_in, world):
    _files(world, 30, name="Export")
    _files(world, 3, name="Payroll")
    page = signed_in.get(f"/w/{world.workspace.id}/files/?q=payroll").get_data(as_text=True)
    assert _position(page) == "1–3 of 3"


def test_search_form_asks_through_htmx_after_a_pause_and_keeps_the_url(signed_in, world):
    _files(world, 1)
    page = signed_in.get(f"/w/{world.workspace.id}/files/").get_data(as_text=True)

    form = re.search(r'<form class="list-controls".*?>', page, re.S).group(0)
    assert 'hx-trigger="input changed delay:300ms from:#list-search, change, submit"' in form
    assert 'hx-push-url="true"' in form and 'hx-select="#list-results"' in form


def test_search_in_the_url_filters_the_page_and_stays_in_the_field(signed_in, world):
    _files(world, 3, name="Ward")
    wanted = _files(world, 1, name="Harbour")[0]

    page = signed_in.get(f"/w/{world.workspace.id}/files/?q=harbour&sort=name").get_data(as_text=True)

    assert _file_ids(page) == [wanted.id]
    assert 'value="harbour"' in page
    assert '<option value="name" selected>' in page


@pytest.mark.parametrize("value", factories.hostile_values() + ["\x00", "%", "_", "a" * 500])
def test_every_hostile_search_answers_a_page(signed_in, world, value):
    """Each hostile value (and NUL, wildcards, a very long text) as a search: 200, the value escaped on the page."""
    _files(world, 1)

    response = signed_in.get(f"/w/{world.workspace.id}/files/?q={quote(value)}")

    assert response.status_code == 200
    assert "<script>alert" not in response.get_data(as_text=True)


@pytest.mark.parametrize("cursor", ["forged", "eyJ0IjoxfQ.AAAA", "' OR 1=1 --", "\u202e", "%00"])
def test_forged_page_link_gives_the_first_page_with_a_message(signed_in, world, cursor):
    files = _files(world, 30)

    response = signed_in.get(f"/w/{world.workspace.id}/files/?after={quote(cursor)}")

    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "That page link is not valid" in page
    assert _file_ids(page) == [export.id for export in files[:25]]


def test_search_that_finds_nothing_offers_to_show_everything(signed_in, world):
    _files(world, 2)

    page = signed_in.get(f"/w/{world.workspace.id}/files/?q=nothing-like-this").get_data(as_text=True)

    assert "No files match this search" in page
    assert f'href="/w/{world.workspace.id}/files/"' in page


@pytest.mark.parametrize("area", ["queries", "reports", "schedules"])
def test_definition_lists_page_with_a_next_link(signed_in, world, area):
    """Queries, reports and schedules: 30 rows give a first page of 25 with search form and next link."""
    query = factories.make_query(world.workspace, world.member, name="Source query")
    for n in range(30):
        if area == "queries":
            factories.make_query(world.workspace, world.member, name=f"Item {n:02d}")
        elif area == "reports":
            factories.make_report(query, world.member, name=f"Item {n:02d}")
        else:
            factories.make_schedule(query, world.member, name=f"Item {n:02d}")

    first = signed_in.get(f"/w/{world.workspace.id}/{area}/?q=item").get_data(as_text=True)
    second = signed_in.get(_next_link(first)).get_data(as_text=True)

    assert 'class="list-controls"' in first
    assert first.count(">Item ") == 25 and second.count(">Item ") == 5
    assert "Item 24" in first and "Item 25" in second


def test_past_the_counting_limit_the_pager_says_more_than(signed_in, world, monkeypatch):
    """A list counts no further than its limit: 60 files with a limit of 40 read "of more than 40",
    and the third page, past row 40, says it lies beyond it."""
    monkeypatch.setattr(list_pages, "COUNT_LIMIT", 40)
    _files(world, 60)
    first = signed_in.get(f"/w/{world.workspace.id}/files/").get_data(as_text=True)
    second = signed_in.get(_next_link(first)).get_data(as_text=True)
    third = signed_in.get(_next_link(second)).get_data(as_text=True)

    assert [_position(page) for page in (first, second, third)] == [
        "1–25 of more than 40",
        "26–50 of more than 40",
        "Beyond row 40 of more than 40",
    ]
    assert 'rel="prev"' in third and 'rel="next"' not in third
