"""An administrator's Retry of a failed delivery and Deliver of a withheld one (issue 16, item 6),
through the package page's routes: dispatched to a real rq worker, every attempt kept, audited,
only within the package's retention, only for that workspace's administrators."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models import AuditEvent
from app.models.export_destination import ExportDestination
from app.models.package_delivery import DeliveryStatus, ExportDelivery
from app.models.types import utcnow
from app.security.credentials import encrypt_secret
from app.services.work.queue import WorkPriority, work_queue
from app.services.workspace_export import package_delivery
from tests import factories
from tests.fixtures.s3 import BUCKET
from tests.fixtures.workers import wait_for
from tests.integration.package_delivery.delivery_reading import attempt_outcomes, delivery_row


def _actions(action: str) -> list[AuditEvent]:
    db.session.rollback()
    return list(db.session.scalars(select(AuditEvent).where(AuditEvent.action == action)))


def _url(package, delivery, action: str) -> str:
    return f"/w/{package.workspace_id}/export/packages/{package.id}/deliveries/{delivery.id}/{action}"


def _page(client, package) -> str:
    return client.get(f"/w/{package.workspace_id}/export/packages/{package.id}").get_data(as_text=True)


def _failed_for_good(package, destination) -> ExportDelivery:
    """A delivery failed permanently at its first attempt (this server had no folder for directory
    destinations then)."""
    delivery = factories.make_package_delivery(package, destination)
    attempt = package_delivery_lifecycle.start(delivery.id, "earlier-worker", utcnow() + timedelta(minutes=1))
    package_delivery_lifecycle.failed(
        delivery.id, attempt, "permanent", "directory_not_configured", "No folder configured."
    )
    return delivery


@pytest.fixture
def admin_client(client, auth, world):
    auth.login(world.admin.email)
    return client


def test_a_retried_delivery_ends_delivered_with_its_manifest_and_every_attempt_kept(
    stored_package, world, s3_destination, s3_account, start_worker, admin_client
):
    destination = s3_destination(world.workspace, path="drop", secret="not-the-right-secret")
    delivery = factories.make_package_delivery(stored_package.package, destination)
    assert package_delivery.run_delivery(delivery.id) == "failed"
    # The administrator fixes the secret in the destination's settings.
    db.session.get_one(ExportDestination, destination.id).secret_ciphertext = encrypt_secret(s3_account.secret)
    db.session.commit()
    start_worker()

    response = admin_client.post(_url(stored_package.package, delivery, "retry"), data={"attempt": "1"})

    assert response.status_code == 302
    wait_for(lambda: delivery_row(delivery.id).status == DeliveryStatus.DELIVERED, what="the retried delivery")
    assert attempt_outcomes(delivery.id) == [
        (1, "failed", "permanent", "SignatureDoesNotMatch"),
        (2, "delivered", None, None),
    ]
    listed = {item["Key"] for item in s3_account.client.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert listed == set(stored_package.expected_at("drop"))
    assert any(key.endswith("/manifest.json") for key in listed)
    [event] = _actions("export_delivery.retried")
    assert (event.subject_id, event.actor_id) == (delivery.id, world.admin.id)


def test_a_withheld_delivery_is_delivered_once_its_destination_is_enabled(
    stored_package, world, destinations_root, start_worker, admin_client
):
    destination = factories.make_destination(world.workspace, name="Archive folder", path="drop", enabled=False)
    [delivery_id] = package_delivery.create_deliveries(stored_package.package.id)
    delivery = delivery_row(delivery_id)
    assert delivery.status == DeliveryStatus.WITHHELD
    db.session.get_one(ExportDestination, destination.id).enabled = True
    db.session.commit()
    start_worker(DESTINATIONS_ROOT=str(destinations_root))

    response = admin_client.post(_url(stored_package.package, delivery, "deliver"))

    assert response.status_code == 302
    wait_for(lambda: delivery_row(delivery_id).status == DeliveryStatus.DELIVERED, what="the released delivery")
    delivered = {p.relative_to(destinations_root).as_posix() for p in destinations_root.rglob("*") if p.is_file()}
    assert delivered == set(stored_package.expected_at("drop"))
    assert attempt_outcomes(delivery_id) == [(1, "delivered", None, None)]
    assert [event.subject_id for event in _actions("export_delivery.released")] == [delivery_id]


def test_a_withheld_delivery_s_page_says_why_and_how_to_deliver_it(stored_package, world, admin_client):
    destination = factories.make_destination(world.workspace, name="Archive folder", enabled=False)
    delivery = factories.make_package_delivery(stored_package.package, destination, status="withheld")

    before = _page(admin_client, stored_package.package)
    db.session.get_one(ExportDestination, destination.id).enabled = True
    db.session.commit()
    after = _page(admin_client, stored_package.package)

    assert "Withheld because the destination Archive folder was disabled" in before
    assert "enable it</a>, then Deliver" in before
    assert _url(stored_package.package, delivery, "deliver") not in before
    assert _url(stored_package.package, delivery, "deliver") in after


def test_a_withheld_delivery_to_a_disabled_destination_is_not_delivered(stored_package, world, admin_client):
    destination = factories.make_destination(world.workspace, name="Archive folder", enabled=False)
    delivery = factories.make_package_delivery(stored_package.package, destination, status="withheld")

    response = admin_client.post(_url(stored_package.package, delivery, "deliver"))

    assert response.status_code == 409
    assert "The destination Archive folder is disabled. Enable it" in response.get_data(as_text=True)
    assert delivery_row(delivery.id).status == DeliveryStatus.WITHHELD
    assert work_queue(WorkPriority.BULK).job_ids == []


def test_a_second_press_of_retry_makes_no_second_retry(stored_package, world, destinations_root, admin_client):
    delivery = _failed_for_good(stored_package.package, factories.make_destination(world.workspace))

    first = admin_client.post(_url(stored_package.package, delivery, "retry"), data={"attempt": "1"})
    second = admin_client.post(_url(stored_package.package, delivery, "retry"), data={"attempt": "1"})

    assert (first.status_code, second.status_code) == (302, 409)
    assert "already being retried" in second.get_data(as_text=True)
    assert len(work_queue(WorkPriority.BULK).job_ids) == 1
    assert len(_actions("export_delivery.retried")) == 1


def test_a_delivery_of_an_expired_package_cannot_be_retried(stored_package, world, destinations_root, admin_client):
    delivery = _failed_for_good(stored_package.package, factories.make_destination(world.workspace))
    stored_package.package.expires_at = utcnow() - timedelta(minutes=1)
    db.session.commit()

    response = admin_client.post(_url(stored_package.package, delivery, "retry"), data={"attempt": "1"})

    assert response.status_code == 409
    assert "past its retention" in response.get_data(as_text=True)
    assert delivery_row(delivery.id).next_attempt_at is None
    assert _actions("export_delivery.retried") == []


def test_a_failed_delivery_shows_retry_only_within_the_retention(stored_package, world, admin_client):
    delivery = _failed_for_good(stored_package.package, factories.make_destination(world.workspace))

    shown = _page(admin_client, stored_package.package)
    stored_package.package.status = "deleted"
    db.session.commit()
    settled = _page(admin_client, stored_package.package)

    assert _url(stored_package.package, delivery, "retry") in shown
    assert _url(stored_package.package, delivery, "retry") not in settled


def test_another_workspaces_delivery_is_not_found(stored_package, world, client, auth):
    delivery = _failed_for_good(stored_package.package, factories.make_destination(world.workspace))
    other_admin = factories.make_member(world.other_workspace, role="admin").person
    other_package = factories.make_package(factories.make_execution(world.other_workspace))
    auth.login(other_admin.email)

    in_url = client.post(_url(stored_package.package, delivery, "retry"), data={"attempt": "1"})
    under_own_package = client.post(
        f"/w/{world.other_workspace.id}/export/packages/{other_package.id}/deliveries/{delivery.id}/retry",
        data={"attempt": "1"},
    )

    assert (in_url.status_code, under_own_package.status_code) == (404, 404)
    assert delivery_row(delivery.id).next_attempt_at is None


def test_a_plain_member_cannot_retry(stored_package, world, client, auth):
    delivery = _failed_for_good(stored_package.package, factories.make_destination(world.workspace))
    auth.login(world.member.email)

    response = client.post(_url(stored_package.package, delivery, "retry"), data={"attempt": "1"})

    assert response.status_code == 404
    assert delivery_row(delivery.id).next_attempt_at is None


def test_retry_needs_the_page_s_csrf_token(csrf_app, stored_package, world):
    delivery = _failed_for_good(stored_package.package, factories.make_destination(world.workspace))
    client = csrf_app.test_client()
    login_page = client.get("/login").get_data(as_text=True)
    login_token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', login_page).group(1)
    client.post("/login", data={"email": world.admin.email, "password": "password", "csrf_token": login_token})

    refused = client.post(_url(stored_package.package, delivery, "retry"), data={"attempt": "1"})
    assert refused.status_code == 400
    assert delivery_row(delivery.id).next_attempt_at is None

    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', _page(client, stored_package.package)).group(1)
    accepted = client.post(_url(stored_package.package, delivery, "retry"), data={"attempt": "1", "csrf_token": token})
    assert accepted.status_code == 302
