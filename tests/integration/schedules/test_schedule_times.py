"""Times on the schedule pages read on the schedule's own clock, its zone named."""

from __future__ import annotations

from datetime import UTC, datetime

from tests import factories

NEW_YORK_DAILY = {"kind": "daily", "time": "07:00", "zone": "America/New_York"}
# 12:00 UTC on 1 December 2026 is 07:00 in New York (EST, UTC-05:00).
OCCURRENCE = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_the_run_history_shows_each_occurrence_in_the_schedules_zone(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, timetable=NEW_YORK_DAILY)
    factories.make_run(schedule, occurrence_at=OCCURRENCE)
    auth.login(world.member.email)
    history = client.get(f"/w/{world.workspace.id}/schedules/{schedule.id}/runs").get_data(as_text=True)
    assert "07:00 EST" in history
    assert "12:00 UTC" not in history


def test_the_list_shows_the_last_run_in_the_schedules_zone(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, timetable=NEW_YORK_DAILY)
    factories.make_run(schedule, occurrence_at=OCCURRENCE)
    auth.login(world.member.email)
    listing = client.get(f"/w/{world.workspace.id}/schedules/").get_data(as_text=True)
    assert "07:00 EST" in listing
