"""Destinations: add, edit, enable or disable, remove and replace the secret, audited; the secret
encrypted and never shown; at most five, unique by connection and path."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from app.extensions import db
from app.models.export_destination import ExportDestination
from app.security.credentials import decrypt_secret, encrypt_secret
from app.services.destinations import registry
from tests import factories
from tests.integration.export_settings.forms import SECRET, audit_events, counts, destinations_url, s3_form


@pytest.fixture
def admin(client, auth, world):
    auth.login(world.admin.email)
    return world


def _destinations(workspace) -> list[ExportDestination]:
    db.session.rollback()
    return list(
        db.session.scalars(
            select(ExportDestination)
            .where(ExportDestination.workspace_id == workspace.id)
            .order_by(ExportDestination.id)
        )
    )


def _s3_destination(workspace, **overrides) -> ExportDestination:
    values = {
        "kind": "s3",
        "bucket": "bucket-one",
        "region": "us-east-1",
        "access_key_id": "AKIAEXAMPLE",
        "secret_ciphertext": encrypt_secret("old-secret"),
        "connection_key": "s3:aws/bucket-one",
    }
    return factories.make_destination(workspace, **{**values, **overrides})


def _edit_form(destination: ExportDestination, **overrides) -> dict:
    return s3_form(
        **{
            "name": destination.name,
            "bucket": destination.bucket,
            "region": destination.region,
            "access_key_id": destination.access_key_id,
            "secret": "",
            "path": destination.path,
            "version": str(destination.version),
            **overrides,
        }
    )


def test_an_administrator_adds_an_s3_destination(client, admin):
    response = client.post(destinations_url(admin.workspace), data=s3_form())
    [added] = _destinations(admin.workspace)
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/export/destinations/{added.id}")
    assert (added.name, added.bucket, added.region, added.path, added.enabled) == (
        "Warehouse bucket",
        "northwind-exports",
        "eu-west-1",
        "rhythm/packages",
        True,
    )
    assert added.connection_key == "s3:aws/northwind-exports"


def test_the_secret_is_stored_encrypted_and_appears_nowhere_in_plain(client, admin):
    client.post(destinations_url(admin.workspace), data=s3_form())
    [added] = _destinations(admin.workspace)
    row_text = " ".join(str(getattr(added, column.key)) for column in ExportDestination.__table__.columns)
    assert SECRET not in row_text
    assert decrypt_secret(added.secret_ciphertext) == SECRET
    [event] = audit_events("export_destination.")
    assert SECRET not in str(event.details)
    assert event.details["secret_set"] is True
    for page in (
        client.get(destinations_url(admin.workspace)),
        client.get(destinations_url(admin.workspace, f"/{added.id}")),
    ):
        assert page.status_code == 200
        assert SECRET not in page.text
    assert "Set" in client.get(destinations_url(admin.workspace, f"/{added.id}")).text


def test_adding_is_audited_with_the_destination_but_not_the_secret(client, admin):
    client.post(destinations_url(admin.workspace), data=s3_form())
    [event] = audit_events("export_destination.")
    assert (event.action, event.actor_id, event.workspace_id) == (
        "export_destination.added",
        admin.admin.id,
        admin.workspace.id,
    )
    assert event.details["destination"]["bucket"] == "northwind-exports"
    assert "secret" not in event.details["destination"]


def test_a_sixth_destination_is_refused(client, admin):
    for n in range(5):
        client.post(destinations_url(admin.workspace), data=s3_form(name=f"Copy {n}", path=f"copy/{n}"))
    before = counts()
    response = client.post(destinations_url(admin.workspace), data=s3_form(name="Sixth", path="copy/6"))
    assert response.status_code == 400
    assert "at most 5 destinations" in response.text
    assert counts() == before


def test_a_removed_destination_frees_its_place_and_keeps_its_row(client, admin):
    for n in range(5):
        client.post(destinations_url(admin.workspace), data=s3_form(name=f"Copy {n}", path=f"copy/{n}"))
    first = _destinations(admin.workspace)[0]
    assert client.post(destinations_url(admin.workspace, f"/{first.id}/remove")).status_code == 302
    response = client.post(destinations_url(admin.workspace), data=s3_form(name="Again", path="copy/0"))
    assert response.status_code == 302
    rows = _destinations(admin.workspace)
    assert len(rows) == 6
    assert rows[0].removed_at is not None
    assert client.get(destinations_url(admin.workspace, f"/{first.id}")).status_code == 404


def test_the_same_bucket_and_path_twice_is_refused_with_the_other_name(client, admin):
    client.post(destinations_url(admin.workspace), data=s3_form())
    before = counts()
    response = client.post(destinations_url(admin.workspace), data=s3_form(name="Twin", path="rhythm/packages/"))
    assert response.status_code == 400
    assert "“Warehouse bucket” already delivers to this bucket and path" in response.text
    assert counts() == before


def test_the_same_bucket_under_another_path_is_accepted(client, admin):
    client.post(destinations_url(admin.workspace), data=s3_form())
    response = client.post(destinations_url(admin.workspace), data=s3_form(name="Other", path="elsewhere"))
    assert response.status_code == 302
    assert len(_destinations(admin.workspace)) == 2


def test_editing_with_an_empty_secret_keeps_the_stored_one(client, admin):
    destination = _s3_destination(admin.workspace)
    ciphertext, old_name = destination.secret_ciphertext, destination.name
    response = client.post(
        destinations_url(admin.workspace, f"/{destination.id}"),
        data=_edit_form(destination, name="Renamed", region="eu-central-1"),
    )
    assert response.status_code == 302
    [edited] = _destinations(admin.workspace)
    assert (edited.name, edited.region, edited.version) == ("Renamed", "eu-central-1", 2)
    assert edited.secret_ciphertext == ciphertext
    [event] = audit_events("export_destination.changed")
    assert event.details["changed"]["name"] == {"from": old_name, "to": "Renamed"}
    assert event.details["secret_replaced"] is False


def test_saving_over_someone_elses_change_is_a_conflict_that_keeps_the_typing(client, admin):
    """Two saves from the same opened version: the second would undo the first, so it answers 409
    with the typing kept and a link to the destination as it is now, and writes nothing."""
    destination = _s3_destination(admin.workspace)
    url = destinations_url(admin.workspace, f"/{destination.id}")
    client.post(url, data=_edit_form(destination, name="First"))
    before = counts()

    response = client.post(url, data=_edit_form(destination, name="Second", version="1"))

    assert response.status_code == 409
    assert (
        "Someone else changed this destination after you opened it. "
        "Reload it to see their changes, then make yours again." in response.text
    )
    assert f'<a href="{url}">Reload the destination</a>' in response.text
    assert 'value="Second"' in response.text
    assert _destinations(admin.workspace)[0].name == "First"
    assert counts() == before


def test_an_edit_without_the_version_it_was_opened_at_is_a_damaged_form(client, admin):
    destination = _s3_destination(admin.workspace)
    before = counts()
    response = client.post(
        destinations_url(admin.workspace, f"/{destination.id}"), data=_edit_form(destination, version="")
    )
    assert response.status_code == 400
    assert "The form was damaged on its way here." in response.text
    assert counts() == before


def test_replacing_the_secret_encrypts_the_new_one_and_audits_without_it(client, admin):
    destination = _s3_destination(admin.workspace)
    response = client.post(
        destinations_url(admin.workspace, f"/{destination.id}/secret"), data={"secret": "brand-new-secret-123"}
    )
    assert response.status_code == 302
    [replaced] = _destinations(admin.workspace)
    assert decrypt_secret(replaced.secret_ciphertext) == "brand-new-secret-123"
    [event] = audit_events("export_destination.secret_replaced")
    assert "brand-new-secret-123" not in str(event.details)


def test_an_empty_replacement_secret_is_refused(client, admin):
    destination = _s3_destination(admin.workspace)
    before = counts()
    response = client.post(destinations_url(admin.workspace, f"/{destination.id}/secret"), data={"secret": " "})
    assert response.status_code == 400
    assert "Enter the secret access key." in response.text
    assert _destinations(admin.workspace)[0].secret_ciphertext == destination.secret_ciphertext
    assert counts() == before


def test_disabling_and_enabling_are_audited(client, admin):
    destination = _s3_destination(admin.workspace)
    client.post(destinations_url(admin.workspace, f"/{destination.id}/disable"))
    assert _destinations(admin.workspace)[0].enabled is False
    client.post(destinations_url(admin.workspace, f"/{destination.id}/enable"))
    assert _destinations(admin.workspace)[0].enabled is True
    assert [e.action for e in audit_events("export_destination.")] == [
        "export_destination.disabled",
        "export_destination.enabled",
    ]


def test_a_button_pressed_as_someone_else_saves_answers_the_conflict_beside_it(client, admin, monkeypatch):
    """Someone's save lands between the page reading the destination and disabling it (the same
    transaction stands in for theirs: the page's object keeps the version it read)."""
    destination = _s3_destination(admin.workspace)
    read = registry.get_destination

    def read_then_someone_saves(access, destination_id):
        found = read(access, destination_id)
        db.session.execute(
            update(ExportDestination)
            .where(ExportDestination.id == destination_id)
            .values(version=ExportDestination.version + 1)
            .execution_options(synchronize_session=False)
        )
        return found

    monkeypatch.setattr(registry, "get_destination", read_then_someone_saves)
    url = destinations_url(admin.workspace, f"/{destination.id}")

    response = client.post(f"{url}/disable")

    assert response.status_code == 409
    assert '<p class="error" role="alert" id="refused-status"><strong>Nothing was changed.</strong> Someone else' in (
        response.text
    )
    assert f'<a href="{url}">Reload the destination</a>' in response.text
    assert _destinations(admin.workspace)[0].enabled is True
    assert audit_events("export_destination.") == []


def test_removing_is_audited_and_keeps_the_row(client, admin):
    destination = _s3_destination(admin.workspace)
    client.post(destinations_url(admin.workspace, f"/{destination.id}/remove"))
    [removed] = _destinations(admin.workspace)
    assert removed.removed_at is not None
    assert [e.action for e in audit_events("export_destination.")] == ["export_destination.removed"]


def test_a_directory_destination_is_refused_without_a_destinations_root(client, admin):
    response = client.post(destinations_url(admin.workspace), data=s3_form(kind="directory"))
    assert response.status_code == 400
    assert "Directory destinations are not available on this server" in response.text
    assert counts() == (0, 0, 0)


def test_a_directory_destination_is_added_when_a_root_is_configured(client, admin, destinations_root):
    response = client.post(destinations_url(admin.workspace), data=s3_form(kind="directory", path="exports/rhythm"))
    assert response.status_code == 302
    [added] = _destinations(admin.workspace)
    assert (added.kind, added.bucket, added.secret_ciphertext, added.connection_key) == (
        "directory",
        None,
        None,
        "directory:",
    )


def test_a_plain_member_gets_404_from_every_destination_page(client, auth, world):
    destination = _s3_destination(world.workspace)
    auth.login(world.member.email)
    assert client.get(destinations_url(world.workspace)).status_code == 404
    assert client.post(destinations_url(world.workspace), data=s3_form()).status_code == 404
    for tail in ("", "/enable", "/disable", "/remove", "/secret", "/test"):
        method = client.get if tail == "" else client.post
        assert method(destinations_url(world.workspace, f"/{destination.id}{tail}")).status_code == 404
    assert len(_destinations(world.workspace)) == 1 and _destinations(world.workspace)[0].removed_at is None


def test_another_workspaces_destination_is_404_for_an_administrator(client, admin):
    elsewhere = _s3_destination(admin.other_workspace)
    assert client.get(destinations_url(admin.workspace, f"/{elsewhere.id}")).status_code == 404
    assert client.post(destinations_url(admin.workspace, f"/{elsewhere.id}/remove")).status_code == 404
    assert _destinations(admin.other_workspace)[0].removed_at is None


def test_suspended_settings_make_destinations_read_only(client, admin):
    factories.make_export_settings(admin.workspace, status="suspended", suspended_reason="Security review")
    destination = _s3_destination(admin.workspace)
    page = client.get(destinations_url(admin.workspace, f"/{destination.id}"))
    assert "Security review" in page.text
    assert "Save destination" not in page.text
    before = counts()
    response = client.post(destinations_url(admin.workspace, f"/{destination.id}/disable"))
    assert response.status_code == 400
    assert "Security review" in response.text
    assert counts() == before
    assert _destinations(admin.workspace)[0].enabled is True


def test_a_sandbox_workspace_cannot_add_destinations(client, admin):
    admin.workspace.sandbox = True
    db.session.commit()
    response = client.post(destinations_url(admin.workspace), data=s3_form())
    assert response.status_code == 400
    assert "not available in a sandbox workspace" in response.text
    assert counts() == (0, 0, 0)


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:6379", "http://169.254.169.254", "http://[::1]:5432"])
def test_an_endpoint_on_the_servers_own_network_is_refused_on_the_form(client, admin, endpoint_rule_closed, endpoint):
    response = client.post(destinations_url(admin.workspace), data=s3_form(endpoint_url=endpoint))
    assert "Destinations must be on the public internet" in response.text
    assert _destinations(admin.workspace) == []


def test_an_edit_cannot_point_a_destination_at_the_servers_own_network(client, admin, endpoint_rule_closed):
    destination = _s3_destination(admin.workspace)
    response = client.post(
        destinations_url(admin.workspace, f"/{destination.id}"),
        data=_edit_form(destination, endpoint_url="http://10.0.0.7"),
    )
    assert "private-network address" in response.text
    [unchanged] = _destinations(admin.workspace)
    assert unchanged.endpoint_url is None


def _between(page: str, start: str, end: str) -> str:
    """The part of the page from `start` to the next `end` after it."""
    begin = page.index(start)
    return page[begin : page.index(end, begin)]


def test_an_empty_replacement_secret_is_refused_once_beside_its_own_form(client, admin):
    destination = _s3_destination(admin.workspace)

    page = client.post(destinations_url(admin.workspace, f"/{destination.id}/secret"), data={"secret": ""}).text

    assert page.count("Enter the secret access key.") == 1
    assert "Enter the secret access key." in _between(page, 'id="replace-secret-form"', "</form>")
    assert 'id="new-secret" name="secret" value="" autocomplete="new-password" aria-invalid="true"' in page


def test_a_refused_edit_is_shown_in_the_edit_form_not_in_the_connection_box(client, admin):
    destination = _s3_destination(admin.workspace)

    response = client.post(
        destinations_url(admin.workspace, f"/{destination.id}"), data=_edit_form(destination, name="")
    )

    assert response.status_code == 400
    assert "Nothing was changed." in _between(response.text, 'id="edit-destination-form"', "</form>")
    assert "Nothing was changed." not in _between(response.text, 'id="test-result"', "</div>")
    assert response.text.count("Nothing was changed.") == 1


def test_remove_asks_for_confirmation_before_removing(client, admin):
    destination = _s3_destination(admin.workspace)
    remove_url = destinations_url(admin.workspace, f"/{destination.id}/remove")
    page = client.get(destinations_url(admin.workspace, f"/{destination.id}")).text
    assert f'<a class="button danger" href="{remove_url}">Remove</a>' in page
    assert "not available here" not in page

    confirmation = client.get(remove_url)

    assert confirmation.status_code == 200
    assert f"<h1>Remove the destination {destination.name}?</h1>" in confirmation.text
    assert '<button type="submit" class="danger">Remove the destination</button>' in confirmation.text
    assert "Keep it" in confirmation.text
    assert _destinations(admin.workspace)[0].removed_at is None
