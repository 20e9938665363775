"""The email attachment policy on the export settings page: administrators choose links only or a
limit from 1 to 20 MB, audited; a plain member cannot change it."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models import Workspace
from tests.integration.export_settings.forms import audit_events, settings_url


def _policy_url(workspace) -> str:
    return f"{settings_url(workspace)}/attachments"


def _limit(workspace) -> int | None:
    db.session.rollback()
    return db.session.get_one(Workspace, workspace.id, populate_existing=True).attachment_limit_mb


def test_a_new_workspace_sends_links_only(client, auth, world):
    auth.login(world.admin.email)
    page = client.get(settings_url(world.workspace))
    assert b'id="attachments-links" name="choice" value="links" checked' in page.data
    assert _limit(world.workspace) is None


def test_an_administrator_allows_attachments_up_to_a_limit_audited(client, auth, world):
    auth.login(world.admin.email)
    response = client.post(_policy_url(world.workspace), data={"choice": "attach", "limit_mb": "5"})
    assert response.status_code == 302
    assert _limit(world.workspace) == 5
    (event,) = audit_events("workspace.attachment_policy_changed")
    assert (event.actor_id, event.subject_id) == (world.admin.id, world.workspace.id)
    assert event.details == {"changed": {"attachment_limit_mb": {"from": None, "to": 5}}}
    page = client.get(settings_url(world.workspace))
    assert b"Email attachments: Files up to 5 MB are attached" in page.data
    assert b'id="attachments-attach" name="choice" value="attach" checked' in page.data


def test_going_back_to_links_only_clears_the_limit(client, auth, world):
    auth.login(world.admin.email)
    client.post(_policy_url(world.workspace), data={"choice": "attach", "limit_mb": "5"})
    client.post(_policy_url(world.workspace), data={"choice": "links", "limit_mb": "5"})
    assert _limit(world.workspace) is None
    assert len(audit_events("workspace.attachment_policy_changed")) == 2


def test_saving_the_same_policy_writes_nothing(client, auth, world):
    auth.login(world.admin.email)
    response = client.post(_policy_url(world.workspace), data={"choice": "links", "limit_mb": ""})
    assert response.status_code == 302
    assert audit_events("workspace.attachment_policy_changed") == []


@pytest.mark.parametrize("limit", ["21", "0", "", "2.5", "ten"])
def test_a_limit_outside_1_to_20_is_refused_on_the_page(client, auth, world, limit):
    auth.login(world.admin.email)
    response = client.post(_policy_url(world.workspace), data={"choice": "attach", "limit_mb": limit})
    assert response.status_code == 400
    assert b"The attachment policy was not saved." in response.data
    assert b"whole number of MB from 1 to 20" in response.data
    assert _limit(world.workspace) is None


def test_a_member_who_is_not_an_administrator_cannot_change_it(client, auth, world):
    auth.login(world.member.email)
    response = client.post(_policy_url(world.workspace), data={"choice": "attach", "limit_mb": "5"})
    assert response.status_code == 404
    assert _limit(world.workspace) is None
