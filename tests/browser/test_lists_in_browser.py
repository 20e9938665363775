"""The Files list in Chromium: search as you type (htmx, the URL kept in step) and keyset pages."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from app.domain.files import export_file
from app.extensions import db
from app.models.types import utcnow
from tests import factories
from tests.fixtures.browser import htmx_swap, sign_in

FILES = 40
HARBOUR_FILES = 3


def _listed_ids(page) -> list[int]:
    links = page.locator("#list-results table tbody tr td:first-child a")
    return [int(links.nth(i).get_attribute("href").rsplit("/", 1)[1]) for i in range(links.count())]


@pytest.fixture
def files(world):
    query = factories.make_query(world.workspace, world.member, name="Hours export")
    made = [
        factories.make_export(
            query, world.member, source_name=f"Ward export {n:02d}", requested_at=utcnow() - timedelta(minutes=n + 10)
        )
        for n in range(FILES)
    ]
    harbour = [
        factories.make_export(
            query, world.member, source_name=f"Harbour_{n} 100%", requested_at=utcnow() - timedelta(minutes=n)
        )
        for n in range(HARBOUR_FILES)
    ]
    return harbour + made


@pytest.mark.browser
def test_typing_a_search_narrows_the_list_and_puts_it_in_the_url(
    world, files, live_server, browser_page, browser_console_errors
):
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/files/")
    assert len(_listed_ids(page)) == 25

    htmx_swap(page, lambda: page.get_by_label("Search files").press_sequentially("harbour_", delay=30))

    page.wait_for_url(re.compile(r"[?&]q=harbour_"))
    assert _listed_ids(page) == [export.id for export in files[:HARBOUR_FILES]]
    htmx_swap(page, lambda: page.get_by_label("Search files").fill("100%"))
    assert _listed_ids(page) == [export.id for export in files[:HARBOUR_FILES]]
    page.reload()
    assert page.get_by_label("Search files").input_value() == "100%"
    assert len(_listed_ids(page)) == HARBOUR_FILES
    assert browser_console_errors == []


@pytest.mark.browser
def test_next_page_shows_the_rest_once_and_back_returns_to_the_first(
    world, files, live_server, browser_page, browser_console_errors
):
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/files/")
    first = _listed_ids(page)

    htmx_swap(page, lambda: page.get_by_role("link", name="Next page").click())
    page.wait_for_url(re.compile(r"[?&]after="))
    second = _listed_ids(page)

    assert first + second == [export.id for export in files]
    assert page.get_by_role("link", name="Next page").count() == 0
    page.go_back()
    page.wait_for_function("() => !location.search.includes('after=')")
    assert _listed_ids(page) == first
    htmx_swap(page, lambda: page.get_by_label("Order").select_option("name"))
    page.wait_for_url(re.compile(r"[?&]sort=name"))
    names = page.locator("#list-results table tbody tr td:first-child a")
    shown = [names.nth(i).text_content() for i in range(names.count())]
    assert shown == sorted(shown, key=str.lower)
    assert browser_console_errors == []


@pytest.mark.browser
def test_two_files_of_one_query_and_format_have_their_own_download_names_titles_and_headings(
    world, live_server, browser_page
):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    twins = [factories.make_export(query, world.member) for _ in range(2)]
    for export in twins:
        export_file.succeed(export.id, export_file.start(export.id), size_bytes=3, row_count=1, retention_days=30)
    db.session.commit()
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/files")

    downloads = page.get_by_role("link", name=re.compile(r"^Download "))
    names = sorted(downloads.evaluate_all("links => links.map(link => link.textContent.trim())"))
    assert names == sorted(f"Download {export.file_name}, file {export.id}" for export in twins)
    seen = set()
    for export in twins:
        page.goto(f"{live_server}/w/{world.workspace.id}/files/{export.id}")
        seen.add((page.title(), page.locator("h1").inner_text()))
    assert len(seen) == 2
