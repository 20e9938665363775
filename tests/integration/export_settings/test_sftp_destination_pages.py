"""SFTP destinations through the pages, against a real SSH server on the loopback: added with a
password or a private key (stored encrypted, never shown or logged or audited), the host key
shown at the first Test connection and pinned when the administrator confirms it, the endpoint
rule applied to the host."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import select

from app.destinations.sftp import fingerprint
from app.extensions import db
from app.models.export_destination import ExportDestination
from app.security.credentials import decrypt_secret
from tests.integration.export_settings.forms import audit_events, destinations_url


@pytest.fixture
def admin(client, auth, world):
    auth.login(world.admin.email)
    return world


def sftp_form(server, **overrides) -> dict:
    data = {
        "name": "Payroll SFTP",
        "kind": "sftp",
        "host": "127.0.0.1",
        "port": str(server.port),
        "username": server.user,
        "sftp_login": "password",
        "password": server.password,
        "private_key": "",
        "path": "inbound/rhythm",
    }
    return {**data, **overrides}


def _only_destination(workspace) -> ExportDestination:
    db.session.rollback()
    return db.session.scalars(select(ExportDestination).where(ExportDestination.workspace_id == workspace.id)).one()


def _test(client, workspace, destination):
    return client.post(destinations_url(workspace, f"/{destination.id}/test"), headers={"HX-Request": "true"})


def test_the_add_form_offers_the_sftp_fields_hidden_for_other_kinds(client, admin):
    page = client.get(destinations_url(admin.workspace)).text
    assert 'id="kind-sftp"' in page and 'class="sftp-fields"' in page
    for field in ("host", "port", "username", "password", "private_key"):
        assert f'name="{field}"' in page
    css = client.get("/static/css/app.css").text
    assert 'form:has(input[name="kind"]:not([value="sftp"]):checked) .sftp-fields { display: none; }' in css


def test_an_sftp_destination_is_added_pinned_by_its_first_test_and_then_connects(client, admin, sftp_server, caplog):
    caplog.set_level(logging.DEBUG)
    response = client.post(destinations_url(admin.workspace), data=sftp_form(sftp_server))
    assert response.status_code == 302, response.text
    destination = _only_destination(admin.workspace)
    assert (destination.kind, destination.host, destination.port, destination.username, destination.sftp_login) == (
        "sftp",
        "127.0.0.1",
        sftp_server.port,
        sftp_server.user,
        "password",
    )
    assert decrypt_secret(destination.secret_ciphertext) == sftp_server.password
    assert destination.host_key is None

    # The first test: nothing sent, the server's fingerprint shown with a form to pin it.
    shown = fingerprint(sftp_server.host_key)
    first = _test(client, admin.workspace, destination)
    assert "The connection failed." in first.text and "not pinned" in first.text
    assert f'id="offered-host-key">{shown}</code>' in first.text
    assert sftp_server.files() == {}

    pinned = client.post(destinations_url(admin.workspace, f"/{destination.id}/host-key"), data={"fingerprint": shown})
    assert pinned.status_code == 302
    page = client.get(pinned.headers["Location"]).text
    assert "host key is pinned" in page and f"Pinned: <code>{shown}</code>" in page
    assert _only_destination(admin.workspace).host_key == sftp_server.host_key
    [event] = audit_events("export_destination.host_key_pinned")
    assert event.details == {"from_host_key": None, "to_host_key": shown}

    second = _test(client, admin.workspace, destination)
    assert "Connected." in second.text and "offered-host-key" not in second.text
    assert sftp_server.files() == {}  # the probe read back and deleted

    pages = first.text + page + second.text + client.get(destinations_url(admin.workspace)).text
    audited = str([event.details for event in audit_events("export_destination")])
    for text in (pages, audited, caplog.text):
        assert sftp_server.password not in text


def test_a_private_key_login_is_added_and_the_key_never_shown_logged_or_audited(
    client, admin, sftp_server, sftp_destination, caplog
):
    caplog.set_level(logging.DEBUG)
    form = sftp_form(sftp_server, sftp_login="private_key", password="", private_key=sftp_server.private_key)
    response = client.post(destinations_url(admin.workspace), data=form)
    assert response.status_code == 302, response.text
    destination = _only_destination(admin.workspace)
    assert decrypt_secret(destination.secret_ciphertext) == sftp_server.private_key.strip() + "\n"
    # Pinned as an administrator would, then tested: the key logs in.
    _test(client, admin.workspace, destination)
    client.post(
        destinations_url(admin.workspace, f"/{destination.id}/host-key"),
        data={"fingerprint": fingerprint(sftp_server.host_key)},
    )
    assert "Connected." in _test(client, admin.workspace, destination).text

    page = client.get(destinations_url(admin.workspace, f"/{destination.id}")).text
    assert "Private key (Ed25519 or RSA) (set; never shown)" in page
    key_body = sftp_server.private_key.splitlines()[1]
    audited = str([event.details for event in audit_events("export_destination")])
    for text in (page, audited, caplog.text):
        assert key_body not in text and "PRIVATE KEY-----" not in text


def test_a_key_that_is_not_one_is_refused_on_its_field(client, admin, sftp_server):
    form = sftp_form(
        sftp_server,
        sftp_login="private_key",
        private_key="-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----",
    )
    response = client.post(destinations_url(admin.workspace), data=form)
    assert response.status_code == 400
    assert "could not be read" in response.text and "bm90IGEga2V5" not in response.text


def test_a_fingerprint_other_than_the_one_offered_is_not_pinned(client, admin, sftp_server, sftp_destination):
    destination = sftp_destination(admin.workspace, host_key=None)
    _test(client, admin.workspace, destination)
    sftp_server.replace_host_key()  # the key the administrator saw is not the server's any more

    response = client.post(
        destinations_url(admin.workspace, f"/{destination.id}/host-key"),
        data={"fingerprint": "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA (ED25519)"},
    )

    assert response.status_code == 400 and "test the connection again" in response.text
    assert _only_destination(admin.workspace).host_key is None


def test_a_changed_host_key_is_shown_with_both_fingerprints_and_may_be_pinned_again(
    client, admin, sftp_server, sftp_destination
):
    destination = sftp_destination(admin.workspace)
    before = fingerprint(sftp_server.host_key)
    sftp_server.replace_host_key()
    after = fingerprint(sftp_server.host_key)

    response = _test(client, admin.workspace, destination)

    assert "host key has changed" in response.text and before in response.text and after in response.text
    client.post(destinations_url(admin.workspace, f"/{destination.id}/host-key"), data={"fingerprint": after})
    [event] = audit_events("export_destination.host_key_pinned")
    assert event.details == {"from_host_key": before, "to_host_key": after}
    assert "Connected." in _test(client, admin.workspace, destination).text


def test_changing_the_server_forgets_the_pinned_key(client, admin, sftp_server, sftp_destination):
    destination = sftp_destination(admin.workspace)
    form = sftp_form(sftp_server, name=destination.name, port="2200", password="", version=str(destination.version))
    response = client.post(destinations_url(admin.workspace, f"/{destination.id}"), data=form)
    assert response.status_code == 302, response.text
    changed = _only_destination(admin.workspace)
    assert (changed.port, changed.host_key) == (2200, None)
    assert decrypt_secret(changed.secret_ciphertext) == sftp_server.password  # an empty password keeps it


def test_the_loopback_is_refused_at_save_unless_allowed(client, admin, endpoint_rule_closed, sftp_server):
    response = client.post(destinations_url(admin.workspace), data=sftp_form(sftp_server))
    assert response.status_code == 400
    assert "loopback address" in response.text and "DESTINATION_ALLOWED_HOSTS" in response.text
    assert db.session.scalars(select(ExportDestination)).all() == []
