"""The staff page of a workspace-export delivery and its supersede action: who sees it, who acts,
and what superseding leaves (the old row as history, an audited reason, a started replacement)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from markupsafe import escape
from sqlalchemy import select

from app.domain.errors import AccessDenied, ValidationError
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models import AuditEvent
from app.models.export_package import ExportPackage
from app.models.package_delivery import DeliveryStatus, ExportDelivery
from app.models.types import utcnow
from app.services.work.queue import WorkPriority, work_queue
from app.services.workspace_export import package_delivery_actions
from tests import factories


@pytest.fixture
def failed_delivery(world) -> ExportDelivery:
    package = factories.make_package(factories.make_execution(world.workspace))
    delivery = factories.make_package_delivery(package, factories.make_destination(world.workspace, name="Lake"))
    number = package_delivery_lifecycle.start(delivery.id, "worker-1", utcnow() + timedelta(seconds=30))
    package_delivery_lifecycle.failed(delivery.id, number, "permanent", "AccessDenied", "AccessDenied: Access Denied")
    return delivery


def _staff(*permissions: str):
    return factories.make_person(is_staff=True, staff_permissions=list(permissions))


def _url(delivery_id: int) -> str:
    return f"/staff/deliveries/{delivery_id}"


def _row(delivery_id: int) -> ExportDelivery:
    db.session.rollback()
    return db.session.get(ExportDelivery, delivery_id, populate_existing=True)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_anonymous_visitors_are_sent_to_the_login_page(client, failed_delivery, method):
    response = client.open(_url(failed_delivery.id), method=method, data={"reason": "x"})

    assert response.status_code == 302
    assert "/login" in response.headers["Location"]


@pytest.mark.parametrize("who", ["admin", "member", "outsider"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_people_who_are_not_staff_get_404(client, auth, world, failed_delivery, who, method):
    auth.login(getattr(world, who).email)

    response = client.open(_url(failed_delivery.id), method=method, data={"reason": "because"})

    assert response.status_code == 404
    assert _row(failed_delivery.id).status == DeliveryStatus.FAILED


def test_staff_with_view_permission_see_the_delivery_and_its_attempts_without_the_action(client, auth, failed_delivery):
    auth.login(_staff("staff.view").email)

    page = client.get(_url(failed_delivery.id)).get_data(as_text=True)

    assert "AccessDenied: Access Denied" in page
    assert "Lake" in page
    assert "Supersede and start the replacement" not in page


def test_staff_with_view_permission_cannot_supersede(client, auth, failed_delivery):
    auth.login(_staff("staff.view").email)

    response = client.post(_url(failed_delivery.id), data={"reason": "retry please"})

    assert response.status_code == 403
    assert _row(failed_delivery.id).status == DeliveryStatus.FAILED
    assert db.session.scalar(select(ExportDelivery.id).where(ExportDelivery.replaces_id == failed_delivery.id)) is None


def test_staff_with_execute_permission_supersede_and_start_the_replacement(client, auth, failed_delivery):
    staff = _staff("staff.view", "staff.execute")
    auth.login(staff.email)
    assert "Supersede and start the replacement" in client.get(_url(failed_delivery.id)).get_data(as_text=True)

    response = client.post(_url(failed_delivery.id), data={"reason": "Customer fixed the bucket policy"})

    old = _row(failed_delivery.id)
    replacement = db.session.scalars(select(ExportDelivery).where(ExportDelivery.replaces_id == old.id)).one()
    assert response.status_code == 302
    assert response.headers["Location"].endswith(_url(replacement.id))
    assert (old.status, old.superseded_by_id) == (DeliveryStatus.SUPERSEDED, staff.id)
    assert (replacement.status, replacement.package_id, replacement.destination_id) == (
        DeliveryStatus.PENDING,
        old.package_id,
        old.destination_id,
    )
    event = db.session.scalars(select(AuditEvent)).one()
    assert (event.action, event.actor_id, event.subject_id, event.reason) == (
        "export_delivery.superseded",
        staff.id,
        old.id,
        "Customer fixed the bucket policy",
    )
    assert work_queue(WorkPriority.BULK).job_ids == [replacement.job_id]


def test_superseding_without_a_reason_is_refused_with_a_message(client, auth, failed_delivery):
    auth.login(_staff("staff.execute").email)

    response = client.post(_url(failed_delivery.id), data={"reason": "   "})

    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert '<p class="field-error" id="error-reason" role="alert">Give a reason' in page
    assert 'aria-invalid="true" aria-describedby="error-reason"' in page
    assert _row(failed_delivery.id).status == DeliveryStatus.FAILED
    assert db.session.scalars(select(AuditEvent)).all() == []


def test_supersede_takes_a_reason_as_long_as_every_staff_action_does(client, auth, failed_delivery):
    auth.login(_staff("staff.execute").email)
    page = client.get(_url(failed_delivery.id)).get_data(as_text=True)

    response = client.post(_url(failed_delivery.id), data={"reason": "r" * 1000})

    assert 'maxlength="1000"' in page
    assert response.status_code == 302
    assert _row(failed_delivery.id).status == DeliveryStatus.SUPERSEDED
    assert db.session.scalars(select(AuditEvent)).one().reason == "r" * 1000


def test_a_reason_over_the_staff_limit_is_refused_by_the_service_too(world, failed_delivery):
    with pytest.raises(ValidationError, match="at most 1,000 characters"):
        package_delivery_actions.supersede_and_replace(failed_delivery.id, _staff("staff.execute"), "r" * 1001)
    assert _row(failed_delivery.id).status == DeliveryStatus.FAILED


def test_a_delivery_that_is_not_failed_cannot_be_superseded(client, auth, world):
    package = factories.make_package(factories.make_execution(world.workspace))
    delivery = factories.make_package_delivery(package, factories.make_destination(world.workspace), status="delivered")
    auth.login(_staff("staff.execute").email)

    response = client.post(_url(delivery.id), data={"reason": "again"})

    assert response.status_code == 400
    assert "Only a failed delivery can be superseded" in response.get_data(as_text=True)
    assert _row(delivery.id).status == DeliveryStatus.DELIVERED
    assert db.session.scalars(select(AuditEvent)).all() == []


@pytest.mark.parametrize("past_retention", [{"status": "deleted"}, {"expires_at": utcnow() - timedelta(minutes=1)}])
def test_a_delivery_of_a_package_past_its_retention_cannot_be_superseded(client, auth, failed_delivery, past_retention):
    """Its replacement could never be delivered (it would expire at once): refused, as Retry is."""
    package = db.session.get(ExportPackage, failed_delivery.package_id)
    for name, value in past_retention.items():
        setattr(package, name, value)
    db.session.commit()
    auth.login(_staff("staff.execute").email)

    response = client.post(_url(failed_delivery.id), data={"reason": "Customer fixed the bucket policy"})

    assert response.status_code == 400
    assert "The package is past its retention (expired or deleted)" in response.get_data(as_text=True)
    assert _row(failed_delivery.id).status == DeliveryStatus.FAILED
    assert db.session.scalars(select(ExportDelivery).where(ExportDelivery.replaces_id.is_not(None))).all() == []
    assert db.session.scalars(select(AuditEvent)).all() == []


def test_an_unknown_delivery_is_not_found_for_staff(client, auth, app_context):
    auth.login(_staff("staff.execute").email)

    assert client.get(_url(999_999)).status_code == 404
    assert client.get(_url(2**40)).status_code == 404


def test_hostile_names_are_shown_as_text(client, auth, world):
    auth.login(_staff("staff.view").email)
    for value in factories.hostile_values():
        workspace = factories.make_workspace(name=value[:200])
        package = factories.make_package(factories.make_execution(workspace))
        delivery = factories.make_package_delivery(package, factories.make_destination(workspace, name=value[:100]))

        response = client.get(_url(delivery.id))

        assert response.status_code == 200, value
        assert str(escape(value[:100])) in response.get_data(as_text=True), value


def test_the_service_refuses_a_person_without_the_execute_permission(world, failed_delivery):
    for person in (world.admin, _staff("staff.view")):
        with pytest.raises(AccessDenied):
            package_delivery_actions.supersede_and_replace(failed_delivery.id, person, "reason")
    assert _row(failed_delivery.id).status == DeliveryStatus.FAILED
