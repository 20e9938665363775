"""Two people edit one schedule: the second save, made on the version both opened, would undo the
first. It is a conflict (409) saying so, not bad input: nothing is written, the second person's
typing stays on the page, and a link reloads the schedule as it is now."""

from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent
from app.models.schedule import Schedule
from tests import factories
from tests.integration.schedules.forms import schedule_form, schedules_url


def test_saving_over_someone_elses_change_is_a_conflict_that_keeps_the_typing(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, name="Kept")
    opened = str(schedule.version)
    edit_url = schedules_url(world, f"{schedule.id}/edit")
    people = [str(world.member.id)]
    auth.login(world.member.email)
    first = client.post(edit_url, data=schedule_form(query, name="First", people=people, version=opened))
    assert first.status_code == 302

    second = client.post(edit_url, data=schedule_form(query, name="Second", people=people, version=opened))

    page = second.get_data(as_text=True)
    assert second.status_code == 409
    assert "Someone else changed this schedule after you opened it." in page
    assert "Reload it to see their changes, then make yours again." in page
    assert f'<a href="{edit_url}">Reload the schedule</a>' in page
    assert 'value="Second"' in page
    db.session.expire_all()
    assert db.session.get(Schedule, schedule.id).name == "First"
    changes = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "schedule.changed")).all()
    assert len(changes) == 1
