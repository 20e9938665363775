"""Bad input on the destination forms, hostile paths and endpoints included: a clear message each,
no 500, nothing half-saved (the destinations and the audit trail unchanged)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.export_destination import ExportDestination
from app.security.credentials import encrypt_secret
from tests import factories
from tests.integration.export_settings.forms import counts, destinations_url, s3_form

BAD_DESTINATIONS = [
    ({"name": "   "}, "Give the destination a name."),
    ({"name": "x" * 300}, "at most 100 characters"),
    ({"name": "bell\x07name"}, "control or invalid characters"),
    ({"name": "nul\x00name"}, "cannot be used"),
    ({"kind": "ftp"}, "an SFTP server, a directory, a webhook or a Slack channel"),
    ({"kind": None}, "an SFTP server, a directory, a webhook or a Slack channel"),
    ({"path": "../x"}, "must not contain “.” or “..” folders"),
    ({"path": "a/../../etc"}, "must not contain “.” or “..” folders"),
    ({"path": "/abs"}, "must be relative"),
    ({"path": "a//b"}, "must not contain empty folders"),
    ({"path": "a/\x00b"}, "cannot be used"),
    ({"path": "a/\x1bb"}, "control or invisible character"),
    ({"path": "a\\b"}, "not “\\”"),
    ({"path": "p" * 501}, "at most 500 characters"),
    ({"bucket": ""}, "Enter the bucket name."),
    ({"bucket": "UPPER-case"}, "3 to 63 characters of lowercase letters"),
    ({"bucket": "ab"}, "3 to 63 characters"),
    ({"bucket": "b" * 64}, "3 to 63 characters"),
    ({"bucket": "-leading"}, "beginning and ending with a letter or digit"),
    ({"bucket": "two..dots"}, "two dots together"),
    ({"bucket": "192.168.1.10"}, "look like an IP address"),
    ({"bucket": "xn--bucket"}, "cannot begin with “xn--”"),
    ({"bucket": "../etc"}, "3 to 63 characters"),
    ({"region": ""}, "region, such as eu-west-1"),
    ({"region": "EU West"}, "lowercase letters, digits and hyphens"),
    ({"region": "r" * 41}, "lowercase letters, digits and hyphens"),
    ({"endpoint_url": "ftp://files.example.com"}, "must start with https:// or http://"),
    ({"endpoint_url": "javascript:alert(1)"}, "must start with https:// or http://"),
    ({"endpoint_url": "http://user:pw@host.example.com"}, "must not contain a user name or password"),
    ({"endpoint_url": "https://host.example.com/?x=1"}, "must not have a query"),
    ({"endpoint_url": "https://host.example.com#frag"}, "must not have a query"),
    ({"endpoint_url": "https://host.example.com/bucket/path"}, "address only; put folders in the destination path"),
    ({"endpoint_url": "https://host.example.com:99999"}, "not a valid URL"),
    ({"endpoint_url": "https://"}, "must name a server"),
    ({"endpoint_url": "https://exa mple.com"}, "must not contain spaces"),
    ({"endpoint_url": "https://" + "h" * 300 + ".com"}, "at most 300 characters"),
    ({"endpoint_url": "http://127%2e0%2e0%2e1:5127"}, "without %-escapes (such as %2e for a dot)"),
    ({"endpoint_url": "http://minio.localhost:5127"}, "minio.localhost leads to a loopback address"),
    ({"access_key_id": ""}, "Enter the access key id."),
    ({"access_key_id": "has space"}, "printable characters without spaces"),
    ({"access_key_id": "k" * 129}, "printable characters without spaces"),
    ({"secret": ""}, "Enter the secret access key."),
    ({"secret": "has space inside"}, "printable characters without spaces"),
    ({"secret": "s" * 513}, "printable characters without spaces"),
]


@pytest.fixture
def admin(client, auth, world):
    auth.login(world.admin.email)
    return world


def _rows(workspace) -> list[tuple]:
    db.session.rollback()
    return [
        tuple(getattr(d, c.key) for c in ExportDestination.__table__.columns)
        for d in db.session.scalars(
            select(ExportDestination)
            .where(ExportDestination.workspace_id == workspace.id)
            .order_by(ExportDestination.id)
        )
    ]


@pytest.mark.parametrize(("overrides", "message"), BAD_DESTINATIONS)
def test_a_bad_new_destination_is_refused_with_a_message_and_nothing_is_saved(client, admin, overrides, message):
    response = client.post(destinations_url(admin.workspace), data=s3_form(**overrides))
    assert response.status_code == 400
    assert message in response.text
    assert "The destination was not added." in response.text
    assert counts() == (0, 0, 0)


@pytest.mark.parametrize(("overrides", "message"), [case for case in BAD_DESTINATIONS if case[0].get("secret") != ""])
def test_a_bad_edit_leaves_the_destination_and_the_audit_unchanged(client, admin, overrides, message):
    destination = factories.make_destination(
        admin.workspace,
        kind="s3",
        bucket="kept-bucket",
        region="us-east-1",
        access_key_id="AKIAKEPT",
        secret_ciphertext=encrypt_secret("kept-secret"),
        connection_key="s3:aws/kept-bucket",
    )
    before_rows, before_counts = _rows(admin.workspace), counts()
    form = s3_form(**{"secret": "", "version": str(destination.version), **overrides})
    response = client.post(destinations_url(admin.workspace, f"/{destination.id}"), data=form)
    assert response.status_code == 400
    assert message in response.text
    assert _rows(admin.workspace) == before_rows
    assert counts() == before_counts


def test_every_hostile_value_in_every_field_gets_a_page_not_a_500(client, admin):
    fields = ["name", "kind", "bucket", "region", "endpoint_url", "access_key_id", "secret", "path"]
    for value in factories.hostile_values():
        for field in fields:
            response = client.post(
                destinations_url(admin.workspace),
                data=s3_form(**{field: value, "path": f"h/{field}"} if field != "path" else {field: value}),
            )
            assert response.status_code in (302, 400), (field, value)
            assert "Traceback" not in response.text
        db.session.rollback()
        for destination in db.session.scalars(select(ExportDestination).where(ExportDestination.removed_at.is_(None))):
            client.post(destinations_url(admin.workspace, f"/{destination.id}/remove"))
    db.session.rollback()
    for destination in db.session.scalars(select(ExportDestination)):
        assert not destination.path.startswith("/") and ".." not in destination.path.split("/")


def test_a_hostile_name_that_is_valid_text_is_shown_escaped(client, admin):
    response = client.post(destinations_url(admin.workspace), data=s3_form(name="<script>alert(1)</script>"))
    assert response.status_code == 302
    page = client.get(destinations_url(admin.workspace))
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


def test_an_id_beyond_the_database_range_is_404(client, admin):
    assert client.get(destinations_url(admin.workspace, "/99999999999")).status_code == 404
