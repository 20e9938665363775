"""The activity charts' numbers: files and schedule runs per day by outcome, packages' sizes and
durations; shown to administrators as tables beside the charts."""

from __future__ import annotations

from datetime import timedelta

from app.extensions import db
from app.models.types import utcnow
from app.services.workspace import activity_charts
from tests import factories


def files_on(world, days_ago: int, count: int, **overrides):
    query = factories.make_query(world.workspace, world.admin)
    for _ in range(count):
        factories.make_export(query, world.admin, requested_at=utcnow() - timedelta(days=days_ago), **overrides)


def test_files_are_counted_per_day_and_outcome(world):
    files_on(world, 0, 2, status="succeeded", completed_at=utcnow(), expires_at=utcnow(), size_bytes=1, row_count=1)
    files_on(world, 0, 1, status="failed", failure_code="internal")
    files_on(world, 3, 1)  # queued
    files_on(world, 40, 5, status="failed", failure_code="internal")  # outside the window

    series = activity_charts.files_per_day(world.workspace.id)

    assert len(series.days) == activity_charts.DAYS
    assert series.days[-1] == utcnow().date()
    assert series.outcomes["succeeded"][-1] == 2
    assert series.outcomes["failed"][-1] == 1
    assert series.outcomes["in progress"][-4] == 1
    assert sum(series.outcomes["failed"]) == 1


def test_other_workspaces_files_are_not_counted(world):
    query = factories.make_query(world.other_workspace, world.outsider)
    factories.make_export(query, world.outsider)
    assert sum(map(sum, activity_charts.files_per_day(world.workspace.id).outcomes.values())) == 0


def test_schedule_runs_are_counted_per_day_and_outcome(world):
    query = factories.make_query(world.workspace, world.admin)
    schedule = factories.make_schedule(query, world.admin)
    factories.make_run(schedule, status="failed", failure_code="access_lost")
    factories.make_run(schedule)
    series = activity_charts.runs_per_day(world.workspace.id)
    assert (series.outcomes["succeeded"][-1], series.outcomes["failed"][-1]) == (1, 1)


def test_packages_show_their_size_and_the_duration_of_their_execution(world):
    started = utcnow() - timedelta(minutes=10)
    execution = factories.make_execution(
        world.workspace, started_at=started, completed_at=started + timedelta(seconds=95)
    )
    factories.make_package(execution, size_bytes=2_500_000)
    db.session.commit()
    (line,) = activity_charts.package_history(world.workspace.id)
    assert (line.size_bytes, line.seconds) == (2_500_000, 95.0)
    chart = activity_charts.packages_chart([line])
    assert chart["series"][0]["values"] == [2.5] and chart["series"][1]["values"] == [95.0]


def test_the_page_shows_each_chart_with_its_numbers_to_administrators(client, auth, world):
    files_on(world, 1, 3, status="failed", failure_code="internal")
    auth.login(world.admin.email)
    page = client.get(f"/w/{world.workspace.id}/activity/").text
    assert page.count('<canvas id="') == 1
    assert 'id="files-chart"' in page
    day = (utcnow() - timedelta(days=1)).date().isoformat()
    assert f'<th scope="row">{day}</th><td class="num">0</td><td class="num">3</td>' in page


def test_a_chart_without_data_says_nothing_yet_instead_of_drawing_a_flat_line(client, auth, world):
    files_on(world, 1, 1, status="failed", failure_code="internal")
    auth.login(world.admin.email)

    page = client.get(f"/w/{world.workspace.id}/activity/").text

    assert 'id="runs-chart"' not in page and 'id="packages-chart"' not in page
    assert "Nothing yet: no schedule runs in the last 30 days." in page
    assert "Nothing yet: no workspace export package has been made." in page


def test_sizes_and_durations_are_on_axes_of_their_own_and_counts_on_a_whole_number_axis(world):
    files_on(world, 0, 1)
    daily = activity_charts.files_per_day(world.workspace.id).as_chart()
    packages = activity_charts.packages_chart([])

    assert daily["axes"] == [{"id": "count", "title": "Count", "whole": True}]
    assert {series["axis"] for series in daily["series"]} == {"count"}
    assert [series["axis"] for series in packages["series"]] == ["size", "duration"]
    assert [axis["id"] for axis in packages["axes"]] == ["size", "duration"]


def test_a_plain_member_gets_404(client, auth, world):
    auth.login(world.member.email)
    assert client.get(f"/w/{world.workspace.id}/activity/").status_code == 404
