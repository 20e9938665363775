"""The Queries, Reports and Schedules lists: search, filters, orders and pages, each scoped to what the
person may see."""

from __future__ import annotations

from datetime import timedelta

from app.domain.people.access import current_context
from app.models.types import utcnow
from app.services.pages import list_pages
from app.services.schedules import schedules
from app.services.sources import reports, saved_queries
from tests import factories


def _access(world, person):
    return current_context(world.workspace.id, person.id)


def _request(spec, **args):
    return list_pages.read_request(spec, {name: str(value) for name, value in args.items()})


def _query_names(world, person, **args) -> list[str]:
    page = saved_queries.page_queries(_access(world, person), _request(saved_queries.QUERY_LIST, **args))
    return [listing.query.name for listing in page.rows]


def _report_names(world, person, **args) -> list[str]:
    page = reports.page_reports(_access(world, person), _request(reports.REPORT_LIST, **args))
    return [listing.report.name for listing in page.rows]


def _schedule_names(world, person, **args) -> list[str]:
    page = schedules.page_schedules(_access(world, person), _request(schedules.SCHEDULE_LIST, **args))
    return [listing.schedule.name for listing in page.rows]


def test_query_search_is_literal_and_ignores_case(world):
    for name in ["Night_hours", "Nightxhours", "50% approved", "500 approved"]:
        factories.make_query(world.workspace, world.member, name=name)

    assert _query_names(world, world.member, q="NIGHT_") == ["Night_hours"]
    assert _query_names(world, world.member, q="0%") == ["50% approved"]


def test_queries_order_by_name_or_recent_change(world):
    now = utcnow()
    factories.make_query(world.workspace, world.member, name="beta", updated_at=now - timedelta(days=2))
    factories.make_query(world.workspace, world.member, name="Alpha", updated_at=now - timedelta(days=1))
    factories.make_query(world.workspace, world.member, name="gamma", updated_at=now)

    assert _query_names(world, world.member) == ["Alpha", "beta", "gamma"]
    assert _query_names(world, world.member, sort="updated") == ["gamma", "Alpha", "beta"]


def test_queries_on_datasets_the_person_cannot_read_and_other_workspaces_are_not_listed(world):
    factories.make_query(world.workspace, world.admin, name="Hours")
    factories.make_query(world.workspace, world.admin, name="Shifts", dataset="shifts")
    factories.make_query(world.other_workspace, world.outsider, name="Elsewhere")
    reader = factories.make_member(world.workspace, dataset_grants=["timesheet_entries"]).person

    assert _query_names(world, reader) == ["Hours"]
    assert _query_names(world, world.admin) == ["Hours", "Shifts"]


def test_query_pages_cover_every_query_once(world):
    made = {factories.make_query(world.workspace, world.member, name=f"Query {n:03d}").id for n in range(55)}
    access = _access(world, world.member)
    seen, cursor = [], None
    while True:
        args = {"after": cursor} if cursor else {}
        page = saved_queries.page_queries(access, _request(saved_queries.QUERY_LIST, **args))
        seen.extend(listing.query.id for listing in page.rows)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(seen) == 55 and set(seen) == made


def test_report_kind_filter_and_source_search(world):
    query = factories.make_query(world.workspace, world.member, name="Hours by ward")
    factories.make_report(query, world.member, name="Table of hours")
    factories.make_report(
        query,
        world.member,
        name="Summary of hours",
        kind="summary",
        summary={"measures": [{"column": "hours", "aggregate": "sum"}]},
    )

    assert _report_names(world, world.member, kind="summary") == ["Summary of hours"]
    assert _report_names(world, world.member, q="by ward") == ["Summary of hours", "Table of hours"]


def test_reports_on_unreadable_datasets_are_not_listed(world):
    shifts = factories.make_query(world.workspace, world.admin, name="Shifts", dataset="shifts")
    factories.make_report(shifts, world.admin, name="Shift report")
    hours = factories.make_query(world.workspace, world.admin, name="Hours")
    factories.make_report(hours, world.admin, name="Hours report")
    reader = factories.make_member(world.workspace, dataset_grants=["timesheet_entries"]).person

    assert _report_names(world, reader) == ["Hours report"]


def test_schedule_status_filter_and_search_by_source(world):
    query = factories.make_query(world.workspace, world.admin, name="Weekly hours")
    factories.make_schedule(query, world.admin, name="Monday send")
    factories.make_schedule(query, world.admin, name="Paused send", status="paused", pause_reason="user")

    assert _schedule_names(world, world.admin, status="paused") == ["Paused send"]
    assert _schedule_names(world, world.admin, q="weekly") == ["Monday send", "Paused send"]


def test_member_without_schedule_authority_lists_only_their_own_schedules(world):
    query = factories.make_query(world.workspace, world.admin, name="Weekly hours")
    factories.make_schedule(query, world.admin, name="Admin's")
    factories.make_schedule(query, world.member, name="Mine")

    assert _schedule_names(world, world.member) == ["Mine"]
    assert _schedule_names(world, world.admin) == ["Admin's", "Mine"]
