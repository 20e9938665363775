"""The workspace's package list: search (who pressed Export now, the cadence period), filters
(status, format), both time orders and keyset pages, scoped to the workspace, over HTTP for
administrators only; a forged page link or a hostile search answers a page, never an error."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from urllib.parse import quote

import pytest

from app.models.types import utcnow
from app.services.pages import list_pages
from app.services.workspace_export import package_history
from app.services.workspace_export.package_history import PACKAGE_LIST
from tests import factories


def _package(workspace, requester=None, minutes_ago: int = 0, **overrides):
    execution_fields = {key: overrides.pop(key) for key in ("trigger", "cadence_key") if key in overrides}
    execution = factories.make_execution(workspace, requester, **execution_fields)
    return factories.make_package(execution, created_at=utcnow() - timedelta(minutes=minutes_ago), **overrides)


def _page(workspace, **args):
    request = list_pages.read_request(PACKAGE_LIST, {name: str(value) for name, value in args.items()})
    return package_history.page_packages(workspace.id, request)


def _ids(page) -> list[int]:
    return [listing.package.id for listing in page.rows]


def _walk(workspace, **args) -> list[int]:
    seen, cursor = [], None
    while True:
        page = _page(workspace, **args, **({"after": cursor} if cursor else {}))
        seen.extend(_ids(page))
        cursor = page.next_cursor
        if cursor is None:
            return seen


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_pages_cover_every_package_once_in_order(world, sort):
    """60 packages in pages of 25: every package once, in the order of one sorted list."""
    packages = [_package(world.workspace, world.admin, minutes_ago=n) for n in range(60)]

    walked = _walk(world.workspace, sort=sort)

    expected = sorted(packages, key=lambda p: (p.created_at, p.id), reverse=sort == "newest")
    assert walked == [p.id for p in expected]


def test_packages_made_while_paging_cause_no_duplicate_and_no_gap(world):
    before = [_package(world.workspace, world.admin, minutes_ago=n + 10) for n in range(60)]
    first = _page(world.workspace)
    for _ in range(3):
        _package(world.workspace, world.admin)
    second = _page(world.workspace, after=first.next_cursor)
    for _ in range(3):
        _package(world.workspace, world.admin)
    third = _page(world.workspace, after=second.next_cursor)

    assert [*_ids(first), *_ids(second), *_ids(third)] == [p.id for p in before]
    assert third.next_cursor is None


def test_status_filter_shows_only_packages_in_that_status(world):
    available = _package(world.workspace, world.admin)
    expired = _package(world.workspace, world.admin, status="expired", minutes_ago=5)
    _package(world.workspace, world.admin, status="deleted", minutes_ago=10)

    assert _ids(_page(world.workspace, status="available")) == [available.id]
    assert _ids(_page(world.workspace, status="expired")) == [expired.id]


def test_format_filter_shows_only_packages_of_that_format(world):
    _package(world.workspace, world.admin)
    lines = _package(world.workspace, world.admin, format="jsonl", minutes_ago=5)

    assert _ids(_page(world.workspace, format="jsonl")) == [lines.id]


def test_search_finds_who_pressed_export_now_and_the_cadence_period(world):
    pressed = _package(world.workspace, world.admin)
    weekly = _package(world.workspace, trigger="cadence", cadence_key="weekly:2026-W49", minutes_ago=5)

    assert _ids(_page(world.workspace, q=world.admin.name.upper())) == [pressed.id]
    assert _ids(_page(world.workspace, q="w49")) == [weekly.id]


def test_search_finds_a_package_by_the_name_its_page_gives_it(world):
    """ "package 2" finds Package 2 (and any whose number starts with 2), not Package 1 or 12."""
    packages = [_package(world.workspace, world.admin, minutes_ago=n) for n in range(3)]
    wanted = packages[1]
    named = f"package {wanted.id}"

    found = _ids(_page(world.workspace, q=named))

    assert wanted.id in found
    assert all(str(package_id).startswith(str(wanted.id)) for package_id in found)


def test_search_finds_a_package_by_the_start_of_its_identifier(world):
    wanted = _package(world.workspace, world.admin)
    _package(world.workspace, world.admin, minutes_ago=1)

    assert _ids(_page(world.workspace, q=wanted.uid[:8])) == [wanted.id]


def test_every_hostile_value_is_searched_as_text(world):
    """Each hostile value as a search answers a page (nothing matches it), never an error."""
    _package(world.workspace, world.admin)

    for value in factories.hostile_values():
        assert _page(world.workspace, q=value).rows == [], value


def test_packages_of_another_workspace_are_not_listed(world):
    mine = _package(world.workspace, world.admin)
    other_admin = factories.make_member(world.other_workspace, role="admin").person
    _package(world.other_workspace, other_admin)

    assert _ids(_page(world.workspace)) == [mine.id]


@pytest.fixture
def admin_client(client, auth, world):
    auth.login(world.admin.email)
    return client


def _listed_ids(page: str) -> list[int]:
    return [int(found) for found in re.findall(r'href="/w/\d+/export/packages/(\d+)"', page)]


def test_the_list_page_has_a_search_form_and_a_plain_next_link(admin_client, world):
    packages = [_package(world.workspace, world.admin, minutes_ago=n) for n in range(30)]
    url = f"/w/{world.workspace.id}/export/packages/"

    first = admin_client.get(url).get_data(as_text=True)
    next_link = html.unescape(re.search(r'<a class="button" rel="next" href="([^"]+)"', first).group(1))
    second = admin_client.get(next_link).get_data(as_text=True)

    assert re.search(r'<form class="list-controls" method="get" action="/w/\d+/export/packages/"', first)
    assert _listed_ids(first) == [p.id for p in packages[:25]]
    assert _listed_ids(second) == [p.id for p in packages[25:]]


@pytest.mark.parametrize("cursor", ["forged", "eyJ0IjoxfQ.AAAA", "' OR 1=1 --", "\u202e", "%00", "x" * 5000])
def test_a_forged_page_link_gives_the_first_page_with_a_message(admin_client, world, cursor):
    packages = [_package(world.workspace, world.admin, minutes_ago=n) for n in range(30)]

    response = admin_client.get(f"/w/{world.workspace.id}/export/packages/?after={quote(cursor)}")

    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "That page link is not valid" in page
    assert _listed_ids(page) == [p.id for p in packages[:25]]


@pytest.mark.parametrize("value", factories.hostile_values() + ["\x00", "%", "_", "a" * 500])
def test_every_hostile_search_answers_the_page(admin_client, world, value):
    _package(world.workspace, world.admin)

    response = admin_client.get(f"/w/{world.workspace.id}/export/packages/?q={quote(value)}&status=nonsense")

    assert response.status_code == 200
    assert "<script>alert" not in response.get_data(as_text=True)


def test_the_overview_shows_the_newest_packages_and_links_the_list(admin_client, world):
    packages = [_package(world.workspace, world.admin, minutes_ago=n) for n in range(7)]
    factories.make_export_settings(world.workspace)

    page = admin_client.get(f"/w/{world.workspace.id}/export/").get_data(as_text=True)

    assert _listed_ids(page) == [p.id for p in packages[: package_history.RECENT_PACKAGES]]
    assert f'href="/w/{world.workspace.id}/export/packages/"' in page


def test_a_plain_member_gets_404_from_the_list(client, auth, world):
    _package(world.workspace, world.admin)
    auth.login(world.member.email)

    assert client.get(f"/w/{world.workspace.id}/export/packages/").status_code == 404
