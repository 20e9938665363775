"""Webhook and Slack destinations through the pages, against the loopback receiver: a webhook's
signing secret made by Rhythm and shown once (at creation, and when made anew), never again on
any page, log line or audit entry; a Slack URL kept like any secret; Test connection; the URLs
judged by the endpoint rule when saved."""

from __future__ import annotations

import json
import logging

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.export_destination import ExportDestination
from app.security.credentials import decrypt_secret
from tests import factories
from tests.fixtures.message_receiver import Receiver
from tests.integration.export_settings.forms import audit_events, counts, destinations_url

SIGNING_SECRET = 'id="signing-secret">'


@pytest.fixture
def admin(client, auth, world):
    auth.login(world.admin.email)
    return world


def webhook_form(receiver: Receiver, **overrides) -> dict:
    return {"name": "Ops webhook", "kind": "webhook", "url": f"{receiver.url}/hooks/rhythm", **overrides}


def slack_form(receiver: Receiver, **overrides) -> dict:
    return {"name": "#exports", "kind": "slack", "slack_url": f"{receiver.url}/services/T0/B0/secret-part", **overrides}


def _only_destination(workspace) -> ExportDestination:
    db.session.rollback()
    return db.session.scalars(select(ExportDestination).where(ExportDestination.workspace_id == workspace.id)).one()


def _shown_secret(page: str) -> str:
    return page.split(SIGNING_SECRET, 1)[1].split("<", 1)[0]


def _test(client, workspace, destination):
    return client.post(destinations_url(workspace, f"/{destination.id}/test"), headers={"HX-Request": "true"})


def test_adding_a_webhook_shows_its_signing_secret_once_and_never_again(client, admin, receiver, caplog):
    caplog.set_level(logging.DEBUG)
    response = client.post(destinations_url(admin.workspace), data=webhook_form(receiver))

    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    secret = _shown_secret(response.text)
    destination = _only_destination(admin.workspace)
    assert decrypt_secret(destination.secret_ciphertext) == secret
    assert destination.url == f"{receiver.url}/hooks/rhythm"
    assert secret.startswith("whsec_")

    page = client.get(destinations_url(admin.workspace, f"/{destination.id}")).text
    listing = client.get(destinations_url(admin.workspace)).text
    assert secret not in page and secret not in listing
    assert destination.url in page  # the URL is shown: it is not secret
    assert all(secret not in record.getMessage() for record in caplog.records)
    assert all(secret not in json.dumps(event.details) for event in audit_events("export_destination"))


def test_test_connection_posts_a_message_signed_with_the_secret_shown(client, admin, receiver):
    secret = _shown_secret(client.post(destinations_url(admin.workspace), data=webhook_form(receiver)).text)
    receiver.secret = secret

    answer = _test(client, admin.workspace, _only_destination(admin.workspace))

    assert "Connected." in answer.text and "HTTP 200 OK" in answer.text
    assert [message.signature_valid for message in receiver.received] == [True]


def test_a_new_signing_secret_is_shown_once_and_signs_from_then_on(client, admin, receiver):
    first = _shown_secret(client.post(destinations_url(admin.workspace), data=webhook_form(receiver)).text)
    destination = _only_destination(admin.workspace)

    response = client.post(destinations_url(admin.workspace, f"/{destination.id}/signing-secret"))

    second = _shown_secret(response.text)
    assert second != first
    assert decrypt_secret(_only_destination(admin.workspace).secret_ciphertext) == second
    receiver.secret = first
    _test(client, admin.workspace, destination)
    receiver.secret = second
    _test(client, admin.workspace, destination)
    assert [message.signature_valid for message in receiver.received] == [False, True]
    assert [event.action for event in audit_events("export_destination.signing")] == [
        "export_destination.signing_secret_replaced"
    ]


def test_a_receiver_that_refuses_shows_its_status_in_words(client, admin, receiver):
    client.post(destinations_url(admin.workspace), data=webhook_form(receiver))
    receiver.status = 410

    answer = _test(client, admin.workspace, _only_destination(admin.workspace))

    assert "The connection failed." in answer.text
    assert "HTTP 410 Gone" in answer.text


def test_a_slack_destination_keeps_its_url_secret_and_tests_with_a_message(client, admin, receiver, caplog):
    caplog.set_level(logging.DEBUG)
    response = client.post(destinations_url(admin.workspace), data=slack_form(receiver))
    assert response.status_code == 302, response.text
    destination = _only_destination(admin.workspace)

    answer = _test(client, admin.workspace, destination)
    edit = client.post(
        destinations_url(admin.workspace, f"/{destination.id}"),
        data={**slack_form(receiver, name="#exports-renamed", slack_url=""), "version": str(destination.version)},
    )

    assert "Slack accepted a test message" in answer.text
    assert [message.path for message in receiver.received] == ["/services/T0/B0/secret-part"]
    assert edit.status_code == 302, edit.text
    kept = _only_destination(admin.workspace)
    assert kept.name == "#exports-renamed" and decrypt_secret(kept.secret_ciphertext).endswith("/secret-part")
    assert kept.url is None
    page = client.get(destinations_url(admin.workspace, f"/{destination.id}")).text
    assert "secret-part" not in page
    assert all("secret-part" not in record.getMessage() for record in caplog.records)
    assert all("secret-part" not in json.dumps(event.details) for event in audit_events("export_destination"))


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://localhost:8443/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://10.0.0.5/hook",
        "https://[::1]/hook",
        "https://[fd00::1]/hook",
        "https://0.0.0.0/hook",
        "https://0x7f.1/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://metadata.localhost/hook",
    ],
)
@pytest.mark.parametrize("kind", ["webhook", "slack"])
def test_a_url_on_the_server_s_own_network_is_refused_when_saved(
    client, admin, receiver, endpoint_rule_closed, url, kind
):
    before = counts()
    form = webhook_form(receiver, url=url) if kind == "webhook" else slack_form(receiver, slack_url=url)

    response = client.post(destinations_url(admin.workspace), data=form)

    assert response.status_code == 400
    assert "DESTINATION_ALLOWED_HOSTS" in response.text
    assert counts() == before


def test_plain_http_is_refused_for_a_host_the_operator_does_not_allow(client, admin, receiver, endpoint_rule_closed):
    response = client.post(destinations_url(admin.workspace), data=webhook_form(receiver))

    assert response.status_code == 400
    assert "must start with https://" in response.text


def test_the_same_webhook_url_twice_is_refused_in_words(client, admin, receiver):
    client.post(destinations_url(admin.workspace), data=webhook_form(receiver))

    again = client.post(destinations_url(admin.workspace), data=webhook_form(receiver, name="Again"))

    assert again.status_code == 400
    assert "already sends to this webhook URL" in again.text


def test_editing_a_webhook_s_url_keeps_its_signing_secret(client, admin, receiver):
    secret = _shown_secret(client.post(destinations_url(admin.workspace), data=webhook_form(receiver)).text)
    destination = _only_destination(admin.workspace)

    response = client.post(
        destinations_url(admin.workspace, f"/{destination.id}"),
        data={**webhook_form(receiver, url=f"{receiver.url}/hooks/v2"), "version": str(destination.version)},
    )

    assert response.status_code == 302, response.text
    edited = _only_destination(admin.workspace)
    assert edited.url == f"{receiver.url}/hooks/v2"
    assert decrypt_secret(edited.secret_ciphertext) == secret


def test_a_directory_destination_cannot_become_a_webhook_whose_secret_no_one_was_shown(client, admin, receiver):
    folder = factories.make_destination(admin.workspace, name="Archive folder")
    before = counts()

    response = client.post(
        destinations_url(admin.workspace, f"/{folder.id}"),
        data={**webhook_form(receiver), "version": str(folder.version)},
    )

    assert response.status_code == 400
    assert "add a webhook destination rather than changing this one" in response.text
    assert counts() == before
    assert db.session.get_one(ExportDestination, folder.id, populate_existing=True).kind == "directory"
