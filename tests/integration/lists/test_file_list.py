"""The Files list (file_library.page_files): search, filters, orders and keyset pagination, scoped to the person."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.domain.people.access import current_context
from app.models.export_file import FailureCode
from app.models.types import utcnow
from app.services.files import file_library
from app.services.files.file_library import FILE_LIST
from app.services.pages import list_pages
from app.services.schedules import schedules
from tests import factories


@pytest.fixture
def owner(world):
    return world.member


@pytest.fixture
def query(world, owner):
    return factories.make_query(world.workspace, owner, name="Hours export")


def _access(world, person):
    return current_context(world.workspace.id, person.id)


def _page(world, person, now=None, **args):
    request = list_pages.read_request(FILE_LIST, {name: str(value) for name, value in args.items()})
    return file_library.page_files(_access(world, person), request, now or utcnow())


def _names(page) -> list[str]:
    return [export.source_name for export in page.rows]


def _file(query, owner, name, minutes_ago=0, **overrides):
    return factories.make_export(
        query, owner, source_name=name, requested_at=utcnow() - timedelta(minutes=minutes_ago), **overrides
    )


def _walk(world, person, **args) -> list[int]:
    """Every file id the list shows, page after page, following each page's cursor."""
    seen, cursor = [], None
    while True:
        page = _page(world, person, **args, **({"after": cursor} if cursor else {}))
        assert page.notices == ()
        seen.extend(export.id for export in page.rows)
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


def test_search_ignores_case_and_reads_source_and_file_names(world, query, owner):
    """ "harbour" finds "Harbour hours" by its source name and another file by its file name."""
    by_source = _file(query, owner, "Harbour hours")
    by_file_name = _file(query, owner, "Weekly", file_name="HARBOUR-weekly.csv")
    _file(query, owner, "Night shifts")

    page = _page(world, owner, q="harbour")

    assert {export.id for export in page.rows} == {by_source.id, by_file_name.id}


@pytest.mark.parametrize(("search", "expected"), [("%", ["100% done"]), ("_", ["a_b"]), ("\\", ["back\\slash"])])
def test_search_takes_like_wildcards_literally(world, query, owner, search, expected):
    """`%`, `_` and `\\` in a search match themselves, not any text."""
    for name in ["100% done", "100 done", "a_b", "axb", "back\\slash", "plain"]:
        _file(query, owner, name)

    assert _names(_page(world, owner, q=search)) == expected


def test_every_hostile_value_is_searched_as_text(world, query, owner):
    """Each hostile value as a search finds the file named by it (a NUL is left out, and said so)."""
    for value in factories.hostile_values():
        name = value[:200]
        export = _file(query, owner, name)
        page = _page(world, owner, q=value)
        searched = page.request.search
        if searched:
            assert export.id in {found.id for found in page.rows}, repr(value)
        if searched != value.strip()[: list_pages.SEARCH_LIMIT]:
            assert page.notices, repr(value)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("queued", ["queued"]),
        ("running", ["running"]),
        ("succeeded", ["ready"]),
        ("expired", ["expired"]),
        ("failed", ["cancelled", "failed"]),
    ],
)
def test_status_filter_shows_only_files_in_that_status(world, query, owner, status, expected):
    """Each status choice; "ready" and "expired" split succeeded files at now, "failed" includes cancelled ones."""
    now = utcnow()
    _file(query, owner, "queued", minutes_ago=1)
    _file(query, owner, "running", minutes_ago=2, status="running", attempt_count=1)
    done = {"status": "succeeded", "completed_at": now, "size_bytes": 1, "row_count": 1}
    _file(query, owner, "ready", minutes_ago=3, expires_at=now + timedelta(days=1), **done)
    _file(query, owner, "expired", minutes_ago=4, expires_at=now - timedelta(days=1), **done)
    _file(query, owner, "failed", minutes_ago=5, status="failed", failure_code=FailureCode.TIMEOUT)
    _file(query, owner, "cancelled", minutes_ago=0, status="failed", failure_code=FailureCode.CANCELLED)

    assert _names(_page(world, owner, now=now, status=status)) == expected


def test_format_filter_shows_only_files_of_that_format(world, query, owner):
    _file(query, owner, "a csv", format="csv")
    _file(query, owner, "an xlsx", format="xlsx")

    assert _names(_page(world, owner, format="xlsx")) == ["an xlsx"]


def test_source_filter_tells_report_files_from_query_files(world, query, owner):
    report = factories.make_report(query, owner, name="Monthly report")
    _file(query, owner, "from the query")
    _file(
        query,
        owner,
        "Monthly report",
        kind="report",
        report_id=report.id,
        report_kind="table",
        format="pdf",
        dataset=None,
        request=None,
    )

    assert _names(_page(world, owner, source="report")) == ["Monthly report"]
    assert _names(_page(world, owner, source="query")) == ["from the query"]


def test_unknown_filter_and_order_values_are_ignored_and_said_so(world, query, owner):
    _file(query, owner, "only one")

    page = _page(world, owner, status="deleted", format="<script>", sort="random")

    assert _names(page) == ["only one"]
    assert page.request.filters == {} and page.request.sort == "newest"
    assert len(page.notices) == 3


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("newest", ["beta", "Alpha", "gamma"]),
        ("oldest", ["gamma", "Alpha", "beta"]),
        ("name", ["Alpha", "beta", "gamma"]),
    ],
)
def test_each_order_sorts_the_files(world, query, owner, sort, expected):
    """Newest and oldest by request time; name ignoring case."""
    _file(query, owner, "gamma", minutes_ago=30)
    _file(query, owner, "Alpha", minutes_ago=20)
    _file(query, owner, "beta", minutes_ago=10)

    assert _names(_page(world, owner, sort=sort)) == expected


def test_list_shows_only_the_persons_own_files_in_this_workspace(world, query, owner):
    """Another member's file, an administrator's and a file of another workspace are not listed (INV-04)."""
    mine = _file(query, owner, "mine")
    _file(query, world.admin, "the admin's")
    _file(query, world.scoped, "a colleague's")
    other_query = factories.make_query(world.other_workspace, world.outsider)
    factories.make_export(other_query, world.outsider, source_name="elsewhere")

    assert [export.id for export in _page(world, owner).rows] == [mine.id]
    assert _names(_page(world, world.admin)) == ["the admin's"]


@pytest.mark.parametrize("sort", ["newest", "oldest", "name"])
def test_pages_cover_every_file_once_in_order(world, query, owner, sort):
    """60 files in pages of 25: three pages, every file once, in the order of a single sorted list."""
    files = [_file(query, owner, f"File {n:02d}", minutes_ago=n) for n in range(60)]

    walked = _walk(world, owner, sort=sort)

    assert len(walked) == 60 and set(walked) == {export.id for export in files}
    key = {
        "newest": lambda e: (e.requested_at, e.id),
        "oldest": lambda e: (e.requested_at, e.id),
        "name": lambda e: (e.source_name.lower(), e.id),
    }[sort]
    expected = [e.id for e in sorted(files, key=key, reverse=sort == "newest")]
    assert walked == expected


def test_files_added_while_paging_cause_no_duplicate_and_no_gap(world, query, owner):
    """New files arriving between pages (newest first) are not shown again on later pages, and none of the
    files that were there is skipped."""
    before = [_file(query, owner, f"Old {n:02d}", minutes_ago=n + 10) for n in range(60)]
    first = _page(world, owner)
    for n in range(5):
        _file(query, owner, f"New {n}", minutes_ago=0)
    second = _page(world, owner, after=first.next_cursor)
    for n in range(5):
        _file(query, owner, f"Newer {n}", minutes_ago=0)
    third = _page(world, owner, after=second.next_cursor)

    walked = [export.id for page in (first, second, third) for export in page.rows]
    assert walked == [export.id for export in before]
    assert third.next_cursor is None


@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor",
        "WyJuZXdlc3QiLFsiMjAyNi0wMS0wMVQwMDowMDowMCswMDowMCIsMV1d.forged",
        "' OR 1=1 --",
        "%00",
        "x" * 5000,
    ],
)
def test_forged_cursor_gives_the_first_page_with_a_message(world, query, owner, cursor):
    files = [_file(query, owner, f"File {n:02d}", minutes_ago=n) for n in range(30)]

    page = _page(world, owner, after=cursor)

    assert [export.id for export in page.rows] == [export.id for export in files[:25]]
    assert page.is_first
    assert any("not valid" in notice for notice in page.notices)


def test_cursor_of_another_order_or_another_list_is_refused(world, query, owner):
    """A genuine cursor used with another order, or on another list, starts from the first page."""
    for n in range(30):
        _file(query, owner, f"File {n:02d}", minutes_ago=n)
    newest_cursor = _page(world, owner).next_cursor
    queries_cursor = list_pages._serializer(list_pages.ListSpec("queries", {}, {}, ())).dumps(["newest", [1, 2]])

    for page in (_page(world, owner, sort="name", after=newest_cursor), _page(world, owner, after=queries_cursor)):
        assert page.is_first and len(page.rows) == 25
        assert any("not valid" in notice for notice in page.notices)


def _page_as_seen(world, person, **args):
    """A page of the list as the person's Files page reads it, with the Schedule filter of their schedules."""
    access = _access(world, person)
    request = list_pages.read_request(file_library.file_list(schedules.visible_names(access)), args)
    return file_library.page_files(access, request, utcnow())


def test_schedule_filter_shows_the_files_of_one_schedule_of_any_or_of_none(world, query, owner):
    weekly = factories.make_schedule(query, owner, name="Weekly hours")
    daily = factories.make_schedule(query, owner, name="Daily hours")
    factories.make_run(weekly, _file(query, owner, "weekly file", minutes_ago=3))
    factories.make_run(daily, _file(query, owner, "daily file", minutes_ago=2))
    _file(query, owner, "by hand", minutes_ago=1)

    assert _names(_page_as_seen(world, owner, schedule=str(weekly.id))) == ["weekly file"]
    assert _names(_page_as_seen(world, owner, schedule="any")) == ["daily file", "weekly file"]
    assert _names(_page_as_seen(world, owner, schedule="none")) == ["by hand"]


def test_schedule_filter_offers_only_the_schedules_the_person_may_see_in_this_workspace(world, query, owner):
    """Their own schedules, not a colleague's nor another workspace's; a manager sees every one here."""
    own = factories.make_schedule(query, owner, name="Mine")
    colleagues = factories.make_schedule(query, world.scoped, name="A colleague's")
    other_query = factories.make_query(world.other_workspace, world.outsider)
    factories.make_schedule(other_query, world.outsider, name="Elsewhere")
    manager = factories.make_member(world.workspace, grants=["schedules.manage"]).person

    def offered(person) -> dict[str, str]:
        choices = dict(
            file_library.file_list(schedules.visible_names(_access(world, person))).filters["schedule"].choices
        )
        return {value: label for value, label in choices.items() if value not in ("any", "none")}

    assert offered(owner) == {str(own.id): "Mine"}
    assert offered(manager) == {str(colleagues.id): "A colleague's", str(own.id): "Mine"}


def test_schedule_filter_ignores_a_schedule_the_person_may_not_see_and_says_so(world, query, owner):
    colleagues = factories.make_schedule(query, world.scoped, name="A colleague's")
    _file(query, owner, "mine")

    page = _page_as_seen(world, owner, schedule=str(colleagues.id))

    assert _names(page) == ["mine"]
    assert page.request.filters == {}
    assert page.notices == ("Schedule: that choice does not exist, so the list is not filtered by it.",)
