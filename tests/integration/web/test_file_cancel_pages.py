"""Cancelling a queued or running file from its page or the Files list (POST with CSRF)."""

from __future__ import annotations

import re

from sqlalchemy import select

from app.domain.files import export_file
from app.extensions import db
from app.models import AuditEvent, ExportFile
from app.models.export_file import FailureCode
from tests import factories


def _cancel_url(export: ExportFile) -> str:
    return f"/w/{export.workspace_id}/files/{export.id}/cancel"


def _fresh(export: ExportFile) -> ExportFile:
    db.session.expire_all()
    return db.session.get(ExportFile, export.id)


def _queued(world, requester=None) -> ExportFile:
    requester = requester or world.member
    query = factories.make_query(world.workspace, requester)
    return factories.make_export(query, requester)


def test_requester_cancels_a_queued_file_and_its_page_says_who(client, auth, world):
    export = _queued(world)
    auth.login(world.member.email)

    response = client.post(_cancel_url(export), data={"view": "detail"})

    assert response.status_code == 302 and response.headers["Location"].endswith(f"/files/{export.id}")
    cancelled = _fresh(export)
    assert (cancelled.status, cancelled.failure_code, cancelled.cancelled_by_id) == (
        "failed",
        FailureCode.CANCELLED,
        world.member.id,
    )
    page = client.get(f"/w/{world.workspace.id}/files/{export.id}").get_data(as_text=True)
    assert "The file was cancelled." in page
    assert "It was cancelled before it was finished" in page
    assert f"Cancelled by {world.member.name}." in page
    event = db.session.execute(select(AuditEvent).where(AuditEvent.action == "file.cancelled")).scalar_one()
    assert (event.actor_id, event.subject_id) == (world.member.id, export.id)


def test_requester_cancels_a_running_file(client, auth, world):
    export = _queued(world)
    export_file.start(export.id)
    auth.login(world.member.email)

    client.post(_cancel_url(export))

    assert _fresh(export).failure_code == FailureCode.CANCELLED


def test_cancel_from_the_list_through_htmx_answers_the_files_status_cell(client, auth, world):
    export = _queued(world)
    auth.login(world.member.email)

    response = client.post(_cancel_url(export), data={"view": "list"}, headers={"HX-Request": "true"})

    body = response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith(f'<div class="progress-cell" id="progress-{export.id}"')
    assert "cancelled" in body and "hx-get" not in body and "Cancel file" not in body


def test_cancel_of_a_settled_file_is_refused_with_a_message(client, auth, world):
    export = _queued(world)
    attempt = export_file.start(export.id)
    export_file.succeed(export.id, attempt, size_bytes=3, row_count=1, retention_days=30)
    auth.login(world.member.email)

    response = client.post(_cancel_url(export), follow_redirects=True)

    assert "This file has already been made, so it can no longer be cancelled." in response.get_data(as_text=True)
    assert _fresh(export).status == "succeeded"
    assert db.session.scalar(select(AuditEvent).where(AuditEvent.action == "file.cancelled")) is None


def test_cancel_twice_says_the_file_was_already_cancelled(client, auth, world):
    export = _queued(world)
    auth.login(world.member.email)
    client.post(_cancel_url(export))

    again = client.post(_cancel_url(export), data={"view": "list"}, headers={"HX-Request": "true"})

    assert "already been cancelled" in again.get_data(as_text=True)


def test_another_persons_file_answers_404_and_stays_queued(client, auth, world):
    export = _queued(world, requester=world.scoped)
    auth.login(world.member.email)

    assert client.post(_cancel_url(export)).status_code == 404
    assert _fresh(export).status == "queued"


def test_administrator_cancels_a_schedule_file_but_a_schedule_manager_may_not(client, auth, world):
    """Both see another person's schedule file; only the administrator may cancel it."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    factories.make_run(factories.make_schedule(query, world.member), export, status="running")
    db.session.commit()
    manager = factories.make_member(world.workspace, grants=["schedules.manage"]).person

    auth.login(manager.email)
    refused = client.post(_cancel_url(export), follow_redirects=True)
    assert "Only the person who asked for this file, or an administrator" in refused.get_data(as_text=True)
    assert _fresh(export).status == "queued"

    auth.logout()
    auth.login(world.admin.email)
    client.post(_cancel_url(export))
    assert _fresh(export).cancelled_by_id == world.admin.id


def test_cancel_needs_the_csrf_token(csrf_app, world):
    export = _queued(world)
    client = csrf_app.test_client()
    login_token = _csrf_token(client.get("/login").get_data(as_text=True))
    client.post("/login", data={"email": world.member.email, "password": "password", "csrf_token": login_token})

    assert client.post(_cancel_url(export)).status_code == 400
    assert _fresh(export).status == "queued"
    token = _csrf_token(client.get(f"/w/{world.workspace.id}/files/{export.id}").get_data(as_text=True))
    assert client.post(_cancel_url(export), data={"csrf_token": token}).status_code == 302
    assert _fresh(export).failure_code == FailureCode.CANCELLED


def test_files_list_shows_expiry_and_a_cancel_button_for_unsettled_files(client, auth, world):
    queued = _queued(world)
    ready = _queued(world)
    attempt = export_file.start(ready.id)
    export_file.succeed(ready.id, attempt, size_bytes=3, row_count=1, retention_days=30)
    auth.login(world.member.email)

    page = client.get(f"/w/{world.workspace.id}/files/").get_data(as_text=True)

    assert page.count(">Cancel file<") == 1 and f'action="{_cancel_url(queued)}"' in page
    assert "Available until" in page
    expires = _fresh(ready).expires_at
    assert expires.strftime("%Y-%m-%d") in page


def _csrf_token(html: str) -> str:
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html)
    assert match, "no CSRF token on the page"
    return match.group(1)
