"""The schedule form's "attach the file when it is small enough": offered and kept only while the
workspace's policy allows attachments; otherwise the form says why and refuses the choice."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, update

from app.extensions import db
from app.models import Workspace
from app.models.schedule import Schedule
from tests import factories
from tests.integration.schedules.forms import schedule_form, schedules_url


@pytest.fixture
def setup(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    return world, query


def _allow_attachments(world, limit_mb: int | None) -> None:
    db.session.execute(update(Workspace).where(Workspace.id == world.workspace.id).values(attachment_limit_mb=limit_mb))
    db.session.commit()


def test_links_only_hides_the_choice_and_says_why(client, setup):
    world, _ = setup
    page = client.get(schedules_url(world, "new"))
    assert b'name="attach_file"' not in page.data
    assert b"This workspace sends links only: its administrators have not allowed attachments" in page.data


def test_links_only_refuses_the_choice_and_saves_nothing(client, setup):
    world, query = setup
    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, attach_file="y", people=[str(world.member.id)])
    )
    assert response.status_code == 400
    assert (
        b'<p class="field-error" id="error-attach_file" role="alert">This workspace sends links only' in response.data
    )
    assert db.session.scalar(select(func.count()).select_from(Schedule)) == 0


def test_with_attachments_allowed_the_choice_is_offered_with_the_limit_and_kept(client, setup):
    world, query = setup
    _allow_attachments(world, 5)
    page = client.get(schedules_url(world, "new"))
    assert b'name="attach_file"' in page.data and b"up to 5 MB after encoding" in page.data

    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, attach_file="y", people=[str(world.member.id)])
    )

    assert response.status_code == 302
    db.session.rollback()
    assert db.session.scalars(select(Schedule.attach_file)).one() is True
