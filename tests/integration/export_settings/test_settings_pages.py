"""The export settings page: administrators save settings, audited; others get 404."""

from __future__ import annotations

from datetime import UTC, datetime

from app.extensions import db
from app.models.export_settings import ExportSettings
from tests import factories
from tests.integration.export_settings.forms import audit_events, counts, settings_form, settings_url


def _settings(workspace) -> ExportSettings:
    db.session.rollback()
    return db.session.query(ExportSettings).filter_by(workspace_id=workspace.id).one()


def test_a_new_workspace_shows_the_default_form(client, auth, world):
    auth.login(world.admin.email)
    page = client.get(settings_url(world.workspace))
    assert page.status_code == 200
    assert b"Save settings" in page.data
    assert b'id="volume_size_mb" name="volume_size_mb" inputmode="numeric" value="256"' in page.data


def test_an_administrator_saves_settings_with_the_next_cadence_time(client, auth, world):
    auth.login(world.admin.email)
    response = client.post(settings_url(world.workspace), data=settings_form(notify_person_ids=[str(world.member.id)]))
    assert response.status_code == 302
    saved = _settings(world.workspace)
    assert (saved.datasets, saved.format, saved.volume_size_mb, saved.retention_days) == (
        ["teams", "shifts"],
        "jsonl",
        64,
        14,
    )
    assert saved.notify_person_ids == [world.member.id]
    assert saved.version == 1
    assert saved.next_cadence_at is not None and saved.next_cadence_at > datetime.now(UTC)
    assert f"{saved.next_cadence_at:%H:%M}" == "03:30"  # the workspace's zone is UTC


def test_saving_is_audited_with_the_change(client, auth, world):
    auth.login(world.admin.email)
    client.post(settings_url(world.workspace), data=settings_form())
    client.post(settings_url(world.workspace), data=settings_form(retention_days="30", version="1"))
    created, changed = audit_events("export_settings.")
    assert (created.action, created.actor_id) == ("export_settings.created", world.admin.id)
    assert changed.action == "export_settings.changed"
    assert changed.details == {"changed": {"retention_days": {"from": 14, "to": 30}}}


def test_pausing_clears_the_next_cadence_time(client, auth, world):
    auth.login(world.admin.email)
    client.post(settings_url(world.workspace), data=settings_form())
    client.post(settings_url(world.workspace), data=settings_form(status="paused", version="1"))
    assert _settings(world.workspace).next_cadence_at is None


def test_saving_over_someone_elses_change_is_a_conflict_that_keeps_the_typing(client, auth, world):
    """Two saves from the same opened version: the second would undo the first, so it answers 409
    with the typing kept and a link to the settings as they are now, and writes nothing."""
    auth.login(world.admin.email)
    url = settings_url(world.workspace)
    client.post(url, data=settings_form())
    client.post(url, data=settings_form(retention_days="20", version="1"))
    before = counts()

    response = client.post(url, data=settings_form(retention_days="5", version="1"))

    assert response.status_code == 409
    assert (
        "Someone else changed these export settings after you opened them. "
        "Reload them to see their changes, then make yours again." in response.text
    )
    assert f'<a href="{url}">Reload the export settings</a>' in response.text
    assert 'name="retention_days" inputmode="numeric" value="5"' in response.text
    assert _settings(world.workspace).retention_days == 20
    assert counts() == before


def test_a_second_create_from_an_old_form_is_refused(client, auth, world):
    auth.login(world.admin.email)
    client.post(settings_url(world.workspace), data=settings_form())
    response = client.post(settings_url(world.workspace), data=settings_form(retention_days="3"))
    assert response.status_code == 409
    assert "Someone else changed these export settings after you opened them." in response.text
    assert _settings(world.workspace).retention_days == 14


def test_a_plain_member_gets_404(client, auth, world):
    auth.login(world.member.email)
    assert client.get(settings_url(world.workspace)).status_code == 404
    assert client.post(settings_url(world.workspace), data=settings_form()).status_code == 404
    assert counts() == (0, 0, 0)


def test_another_workspaces_administrator_gets_404(client, auth, world):
    outsider_admin = factories.make_member(world.other_workspace, role="admin").person
    auth.login(outsider_admin.email)
    assert client.get(settings_url(world.workspace)).status_code == 404
    assert client.post(settings_url(world.workspace), data=settings_form()).status_code == 404
    assert counts() == (0, 0, 0)


def test_a_sandbox_workspace_is_told_why_and_nothing_is_saved(client, auth, world):
    world.workspace.sandbox = True
    db.session.commit()
    auth.login(world.admin.email)
    page = client.get(settings_url(world.workspace))
    assert "not available in a sandbox workspace" in page.text
    assert b"Save settings" not in page.data
    response = client.post(settings_url(world.workspace), data=settings_form())
    assert response.status_code == 400
    assert "not available in a sandbox workspace" in response.text
    assert counts() == (0, 0, 0)


def test_suspended_settings_show_read_only_with_the_reason(client, auth, world):
    factories.make_export_settings(world.workspace, status="suspended", suspended_reason="Unpaid invoice 4411")
    auth.login(world.admin.email)
    page = client.get(settings_url(world.workspace))
    assert "Unpaid invoice 4411" in page.text
    assert "<fieldset disabled>" in page.text
    assert b"Save settings" not in page.data


def test_saving_suspended_settings_is_refused_with_the_reason(client, auth, world):
    settings = factories.make_export_settings(world.workspace, status="suspended", suspended_reason="Unpaid invoice")
    auth.login(world.admin.email)
    before = counts()
    response = client.post(settings_url(world.workspace), data=settings_form(version=str(settings.version)))
    assert response.status_code == 400
    assert "Unpaid invoice" in response.text
    assert _settings(world.workspace).status == "suspended"
    assert counts() == before
