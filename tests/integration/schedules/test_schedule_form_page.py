"""What the schedule form offers and how it refuses: every mistake at once, each beside its
field; the formats each source allows; people to tick, nobody ticked at first; zone suggestions;
the fields of other frequencies ignored."""

from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models.schedule import Schedule
from tests import factories
from tests.integration.schedules.forms import schedule_form, schedules_url


def _message_beside(page: str, name: str) -> str | None:
    """The message the field named `name` is marked invalid with (by aria-describedby), or None."""
    field = re.search(rf'<(?:input|select|textarea)[^>]*name="{name}"[^>]*>', page)
    if field is None or 'aria-invalid="true"' not in field.group(0):
        return None
    described = re.search(r'aria-describedby="([^"]+)"', field.group(0))
    if described is None:
        return None
    message = re.search(rf'<p class="field-error" id="{described.group(1)}" role="alert">([^<]*)</p>', page)
    return message.group(1) if message else None


def test_a_refused_form_shows_every_mistake_at_once_each_on_its_field(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    response = client.post(
        schedules_url(world, "new"),
        data=schedule_form(query, name="", time="25:99", zone="Mars/Olympus", people=[], addresses=""),
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "4 fields need a change" in page
    assert _message_beside(page, "name") == "Give the schedule a name."
    assert "on the 24-hour clock" in (_message_beside(page, "time") or "")
    assert "“Mars/Olympus” is not a time zone" in (_message_beside(page, "zone") or "")
    assert _message_beside(page, "people") == "Choose at least one recipient."
    assert _message_beside(page, "format") is None
    assert db.session.scalars(select(Schedule)).first() is None


def test_the_new_form_ticks_nobody_and_offers_people_as_checkboxes(client, auth, world):
    auth.login(world.member.email)
    page = client.get(schedules_url(world, "new")).get_data(as_text=True)
    people = re.findall(r'<input type="checkbox" name="people" value="(\d+)"([^>]*)>', page)
    assert str(world.member.id) in [value for value, _ in people]
    assert all("checked" not in rest for _, rest in people)
    assert '<select name="people"' not in page


def test_each_source_names_the_formats_a_schedule_of_it_may_make(client, auth, world):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    table = factories.make_report(query, world.member, name="Hours table")
    summary = factories.make_report(query, world.member, name="Hours summary", kind="summary")
    auth.login(world.member.email)
    page = client.get(schedules_url(world, "new")).get_data(as_text=True)
    assert f'value="query:{query.id}" data-formats="csv xlsx"' in page
    assert f'value="report:{table.id}" data-formats="pdf xlsx"' in page
    assert f'value="report:{summary.id}" data-formats="pdf"' in page


def test_the_time_zone_field_suggests_iana_zones(client, auth, world):
    auth.login(world.member.email)
    page = client.get(schedules_url(world, "new")).get_data(as_text=True)
    assert re.search(r'<input type="text" name="zone" list="zone-suggestions"', page)
    suggestions = page.split('<datalist id="zone-suggestions">', 1)[1].split("</datalist>", 1)[0]
    assert '<option value="Europe/London">' in suggestions
    assert '<option value="America/New_York">' in suggestions
    assert "Etc/GMT+5" not in suggestions


def test_fields_of_other_frequencies_are_ignored(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    response = client.post(
        schedules_url(world, "new"),
        data=schedule_form(
            query,
            frequency="hourly",
            minute="15",
            time="not a time",
            day="99",
            expression="nonsense",
            people=[str(world.member.id)],
        ),
    )
    assert response.status_code == 302
    schedule = db.session.scalars(select(Schedule)).one()
    assert schedule.timetable == {"kind": "hourly", "minute": 15, "zone": "Europe/London"}
