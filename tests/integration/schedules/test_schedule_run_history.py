"""A schedule's run history: numbered runs timed to the second, every time of the page in one zone
(the viewer's once their browser has said it) with the other on hover, the older runs' attempts
and recipients folded away, pages of runs, and a running run's progress."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from app.extensions import db
from app.models.schedule import ScheduleRunAttempt
from tests import factories
from tests.fixtures.routes import HTMX

NEW_YORK_DAILY = {"kind": "daily", "time": "07:00", "zone": "America/New_York"}
# 12:00:05 UTC on 1 December 2026 is 07:00:05 in New York (EST) and 21:00:05 in Tokyo (JST).
OCCURRENCE = datetime(2026, 12, 1, 12, 0, 5, tzinfo=UTC)
# What the `datetime` filter writes, in UTC whatever the page's zone: none of it on a schedule page.
UTC_STAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")


def _schedule(world):
    query = factories.make_query(world.workspace, world.member)
    return factories.make_schedule(query, world.member, timetable=NEW_YORK_DAILY)


def _page(client, world, schedule) -> str:
    return client.get(f"/w/{world.workspace.id}/schedules/{schedule.id}").get_data(as_text=True)


def _runs_fragment(client, world, schedule) -> str:
    """The run history as the page's poll fetches it."""
    return client.get(f"/w/{world.workspace.id}/schedules/{schedule.id}/runs", headers=HTMX).get_data(as_text=True)


def test_each_run_is_headed_by_its_number_and_its_time_to_the_second(client, auth, world):
    schedule = _schedule(world)
    factories.make_run(schedule, occurrence_at=OCCURRENCE - timedelta(days=1))
    newest = factories.make_run(schedule, occurrence_at=OCCURRENCE)
    auth.login(world.member.email)
    page = _runs_fragment(client, world, schedule)
    heading = page.split(f'id="run-{newest.id}"', 1)[1].split("</h3>", 1)[0]
    assert "Run 2 · " in heading
    assert ">1 Dec 2026 07:00:05 EST</time>" in heading


def test_without_the_viewers_zone_every_time_is_in_the_schedules_with_utc_on_hover(client, auth, world):
    schedule = _schedule(world)
    run = factories.make_run(schedule, occurrence_at=OCCURRENCE)
    db.session.add(ScheduleRunAttempt(run_id=run.id, number=1, started_at=OCCURRENCE, ended_at=OCCURRENCE))
    db.session.commit()
    auth.login(world.member.email)
    page = _page(client, world, schedule)
    assert "Times are in America/New_York;" in page
    assert 'title="1 Dec 2026 12:00:05 UTC in UTC">1 Dec 2026 07:00:05 EST</time>' in page
    assert UTC_STAMP.search(page) is None


def test_with_the_viewers_zone_every_time_is_in_theirs_with_the_schedules_on_hover(client, auth, world):
    schedule = _schedule(world)
    run = factories.make_run(schedule, occurrence_at=OCCURRENCE)
    db.session.add(ScheduleRunAttempt(run_id=run.id, number=1, started_at=OCCURRENCE, ended_at=OCCURRENCE))
    db.session.commit()
    auth.login(world.member.email)
    client.set_cookie("viewer_zone", "Asia/Tokyo")
    page = _page(client, world, schedule)
    assert "Times are in Asia/Tokyo (your browser's zone)" in page
    assert 'title="1 Dec 2026 07:00:05 EST in America/New_York">1 Dec 2026 21:00:05 JST</time>' in page
    attempts = page.split("<caption>Attempts</caption>", 1)[1].split("</table>", 1)[0]
    assert attempts.count(">1 Dec 2026 21:00:05 JST</time>") == 2
    assert UTC_STAMP.search(page) is None


def test_a_viewers_zone_that_is_not_a_zone_leaves_the_page_in_the_schedules(client, auth, world):
    schedule = _schedule(world)
    factories.make_run(schedule, occurrence_at=OCCURRENCE)
    auth.login(world.member.email)
    client.set_cookie("viewer_zone", "Mars/Olympus")
    page = _page(client, world, schedule)
    assert "Times are in America/New_York;" in page
    assert ">1 Dec 2026 07:00:05 EST</time>" in page


def test_the_newest_runs_show_their_attempts_and_recipients_and_older_ones_fold_them(client, auth, world):
    schedule = _schedule(world)
    runs = [factories.make_run(schedule, occurrence_at=OCCURRENCE + timedelta(days=day)) for day in range(5)]
    for run in runs:
        factories.make_delivery(run, world.member)
    auth.login(world.member.email)
    page = _page(client, world, schedule)
    newest_first = list(reversed(runs))
    for run in newest_first[:3]:
        article = page.split(f'id="run-{run.id}"', 1)[1].split("</article>", 1)[0]
        assert "<caption>Recipients</caption>" in article
        assert "<details" not in article
    for run in newest_first[3:]:
        article = page.split(f'id="run-{run.id}"', 1)[1].split("</article>", 1)[0]
        assert f'<details id="run-{run.id}-details" hx-preserve>' in article
        assert f'<summary id="run-{run.id}-more">Attempts (0) and recipients (1)</summary>' in article


def test_runs_come_ten_a_page_with_the_lists_pager(client, auth, world):
    schedule = _schedule(world)
    runs = [factories.make_run(schedule, occurrence_at=OCCURRENCE + timedelta(days=day)) for day in range(12)]
    auth.login(world.member.email)
    first = _page(client, world, schedule)
    assert first.count('<article class="run"') == 10
    assert "Run 12 · " in first and "Run 3 · " in first and "Run 2 · " not in first
    next_link = re.search(r'<a class="button" rel="next" href="([^"]+)"', first)
    assert next_link is not None
    second = client.get(next_link.group(1).replace("&amp;", "&")).get_data(as_text=True)
    assert [f'id="run-{run.id}"' in second for run in runs[:2]] == [True, True]
    assert second.count('<article class="run"') == 2
    assert "Run 2 · " in second and "Run 1 · " in second


def test_a_running_run_shows_the_rows_its_file_has_written(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    export = factories.make_export(query, world.member, status="running", rows_written=1234)
    factories.make_run(schedule, export, status="running", completed_at=None)
    auth.login(world.member.email)
    page = _runs_fragment(client, world, schedule)
    assert '<progress class="progress" max="100" aria-label="Progress of run 1"' in page
    assert "1,234 rows written" in page


def test_a_running_run_that_is_sending_shows_recipients_sent_of_those_to_send(client, auth, world):
    schedule = _schedule(world)
    run = factories.make_run(schedule, status="running")
    factories.make_delivery(run, world.member)
    factories.make_delivery(run, status="pending", submission_id=None)
    factories.make_delivery(run, status="pending", submission_id=None)
    factories.make_delivery(run, status="skipped", skip_reason="recipient_unsubscribed", submission_id=None)
    auth.login(world.member.email)
    page = _runs_fragment(client, world, schedule)
    assert "recipients sent 1 of 3" in page
    assert 'aria-label="Progress of run 1" value="33"' in page


def test_each_recipient_row_says_whether_its_message_carried_the_file(client, auth, world):
    schedule = _schedule(world)
    run = factories.make_run(schedule, occurrence_at=OCCURRENCE)
    factories.make_delivery(run, email="attached@example.test", attached=True, attachment_limit_mb=5)
    factories.make_delivery(run, email="over@example.test", attached=False, attachment_limit_mb=1)
    factories.make_delivery(run, email="links@example.test")
    auth.login(world.member.email)
    page = _page(client, world, schedule)
    rows = {row.split("</td>", 1)[0]: row for row in page.split("<tr><td>")[1:]}
    assert "<td>Attached and linked</td>" in rows["attached@example.test"]
    assert "<td>Linked only: over the 1 MB attachment limit</td>" in rows["over@example.test"]
    assert "<td>Linked</td>" in rows["links@example.test"]
