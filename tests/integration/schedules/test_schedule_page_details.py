"""What the schedule list shows of times (on the schedule's own clock) and the schedule page of recipients."""

from __future__ import annotations

from datetime import UTC, datetime

from app.extensions import db
from app.models.schedule import ScheduleUnsubscribe
from tests import factories

NEW_YORK_DAILY = {"kind": "daily", "time": "07:00", "zone": "America/New_York"}
# 12:00 UTC on 1 December 2026 is 07:00 in New York (EST, UTC-05:00).
OCCURRENCE = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_the_list_shows_the_last_run_in_the_schedules_zone(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, timetable=NEW_YORK_DAILY)
    factories.make_run(schedule, occurrence_at=OCCURRENCE)
    auth.login(world.member.email)
    listing = client.get(f"/w/{world.workspace.id}/schedules/").get_data(as_text=True)
    assert "07:00 EST" in listing


def test_an_unsubscribed_recipient_is_marked_on_the_schedule_page(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    db.session.add(ScheduleUnsubscribe(schedule_id=schedule.id, address_key=f"person:{world.member.id}"))
    db.session.commit()
    auth.login(world.member.email)
    page = client.get(f"/w/{world.workspace.id}/schedules/{schedule.id}").get_data(as_text=True)
    assert "unsubscribed" in page.split("Recipients", 1)[1].split("Template", 1)[0]
