"""Test connection against moto's S3 server: the outcome recorded and shown, the store's own error on failure."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.export_destination import ExportDestination
from tests.integration.export_settings.forms import audit_events, destinations_url


@pytest.fixture
def admin(client, auth, world):
    auth.login(world.admin.email)
    return world


def _tested(destination_id: int) -> ExportDestination:
    db.session.rollback()
    return db.session.get(ExportDestination, destination_id, populate_existing=True)


def _test(client, workspace, destination):
    return client.post(destinations_url(workspace, f"/{destination.id}/test"), headers={"HX-Request": "true"})


def test_a_working_bucket_reports_success_in_the_fragment(client, admin, s3_destination, s3_account):
    destination = s3_destination(admin.workspace, path="rhythm/probe")
    response = _test(client, admin.workspace, destination)
    assert response.status_code == 200
    # The inside of the page's status region, which stays in the page.
    assert 'id="test-result"' not in response.text
    assert "Connected." in response.text
    tested = _tested(destination.id)
    assert (tested.last_test_ok, tested.last_tested_at is not None) == (True, True)
    assert s3_account.client.list_objects_v2(Bucket=destination.bucket).get("KeyCount", 0) == 0


def test_a_wrong_secret_shows_the_stores_own_error(client, admin, s3_destination):
    destination = s3_destination(admin.workspace, secret="not-the-secret")
    response = _test(client, admin.workspace, destination)
    assert "The connection failed." in response.text
    assert "SignatureDoesNotMatch" in response.text
    assert "not-the-secret" not in response.text
    tested = _tested(destination.id)
    assert tested.last_test_ok is False and "SignatureDoesNotMatch" in tested.last_test_message


def test_a_missing_bucket_shows_the_stores_own_error(client, admin, s3_destination):
    destination = s3_destination(admin.workspace, bucket="no-such-bucket-here")
    response = _test(client, admin.workspace, destination)
    assert "NoSuchBucket" in response.text


def test_the_test_is_audited_with_its_outcome_and_never_the_secret(client, admin, s3_destination, s3_account):
    destination = s3_destination(admin.workspace)
    _test(client, admin.workspace, destination)
    [event] = audit_events("export_destination.tested")
    assert event.details["ok"] is True
    assert s3_account.secret not in str(event.details)


def test_without_htmx_the_test_returns_to_the_destination_page(client, admin, s3_destination):
    destination = s3_destination(admin.workspace)
    response = client.post(destinations_url(admin.workspace, f"/{destination.id}/test"))
    assert response.status_code == 302
    assert "Connected." in client.get(response.headers["Location"]).text


def test_the_page_shows_the_last_outcome(client, admin, s3_destination):
    destination = s3_destination(admin.workspace, bucket="no-such-bucket-here")
    _test(client, admin.workspace, destination)
    page = client.get(destinations_url(admin.workspace, f"/{destination.id}"))
    assert "NoSuchBucket" in page.text
