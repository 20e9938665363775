"""Staff delete a package early from its staff page (issue 16, item 7; seed 001): staff.execute and
a reason needed, audited, the same deletion as the administrators' (so not while a delivery
copies it), and the workspace's administrators told by a notice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models import AuditEvent
from app.models.export_notice import ExportNotice
from app.models.export_package import ExportPackage
from app.models.types import utcnow
from app.storage import get_storage
from tests import factories

STAFF_REASON = "Customer asked support to remove it (ticket 4411)"


@pytest.fixture
def staff(app_context):
    return factories.make_person(name="Sam Okafor", is_staff=True, staff_permissions=["staff.view", "staff.execute"])


def _package(package_id: int) -> ExportPackage:
    db.session.rollback()
    return db.session.get(ExportPackage, package_id, populate_existing=True)


def _deletions() -> list[tuple]:
    db.session.rollback()
    return [
        (event.subject_id, event.actor_id, event.reason)
        for event in db.session.scalars(select(AuditEvent).where(AuditEvent.action == "export.package_deleted"))
    ]


def _delete(client, package, reason: str | None = STAFF_REASON):
    data = {} if reason is None else {"reason": reason}
    return client.post(f"/staff/packages/{package.id}/delete", data=data, follow_redirects=True)


def test_staff_delete_a_package_early_with_their_reason_audited(client, auth, stored_package, staff):
    auth.login(staff.email)

    response = _delete(client, stored_package.package)

    assert "The package is deleted" in response.text
    deleted = _package(stored_package.package.id)
    assert (deleted.status, deleted.deleted_by_id) == ("deleted", staff.id)
    assert get_storage().list_keys(stored_package.package.prefix) == []
    assert _deletions() == [(stored_package.package.id, staff.id, STAFF_REASON)]


def test_the_workspace_s_administrators_are_told_with_the_reason(
    client, auth, stored_package, world, staff, smtp_server, mail_to_smtp_server
):
    auth.login(staff.email)

    _delete(client, stored_package.package)

    [message] = smtp_server.messages
    body = message.part("text/plain")
    assert message.recipients == [world.admin.email]
    assert "Rhythm staff deleted" in body and STAFF_REASON in body
    assert stored_package.package.prefix not in body
    notices = db.session.scalars(select(ExportNotice)).all()
    assert [(n.kind, n.subject_id, n.status) for n in notices] == [
        ("package_deleted", stored_package.package.id, "sent")
    ]


def test_a_deletion_without_a_reason_is_refused(client, auth, stored_package, staff):
    auth.login(staff.email)

    response = _delete(client, stored_package.package, reason="  ")

    refusal = '<p class="field-error" id="error-reason-delete" role="alert">Give a reason'
    assert refusal in response.text and 'aria-describedby="error-reason-delete"' in response.text
    assert _package(stored_package.package.id).status == "available"
    assert _deletions() == []


def test_staff_cannot_delete_a_package_a_delivery_is_copying(client, auth, stored_package, world, staff):
    destination = factories.make_destination(world.workspace, name="Finance bucket")
    delivery = factories.make_package_delivery(stored_package.package, destination)
    package_delivery_lifecycle.start(delivery.id, "worker-copying", utcnow() + timedelta(minutes=1))
    auth.login(staff.email)

    response = _delete(client, stored_package.package)

    assert "being copied to Finance bucket right now" in response.text
    assert _package(stored_package.package.id).status == "available"
    assert db.session.scalars(select(ExportNotice)).all() == []


def test_a_staff_deletion_after_the_deadline_expires_the_package_instead(client, auth, stored_package, staff):
    stored_package.package.expires_at = utcnow() - timedelta(minutes=1)
    db.session.commit()
    auth.login(staff.email)

    response = _delete(client, stored_package.package)

    assert "it has expired instead of being deleted" in response.text
    assert _package(stored_package.package.id).status == "expired"
    assert _deletions() == []
    assert db.session.scalars(select(ExportNotice)).all() == []


def test_staff_with_view_only_cannot_delete_a_package(client, auth, stored_package, world):
    viewer = factories.make_person(is_staff=True, staff_permissions=["staff.view"])
    auth.login(viewer.email)

    response = _delete(client, stored_package.package)
    page = client.get(f"/staff/packages/{stored_package.package.id}").text

    assert response.status_code == 403
    assert "Delete the package" not in page
    assert _package(stored_package.package.id).status == "available"


def test_a_workspace_administrator_cannot_use_the_staff_deletion(client, auth, stored_package, world):
    auth.login(world.admin.email)

    assert _delete(client, stored_package.package).status_code == 404
    assert _package(stored_package.package.id).status == "available"
