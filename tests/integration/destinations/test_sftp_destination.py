"""An SFTP server as a destination, against a real SSH server on the loopback (asyncssh): the
host key pinned or refused, password and key logins, whole files only, the failures in words."""

from __future__ import annotations

import re

import pytest

from app import destinations
from app.destinations.sftp import PARTIAL_MARK, fingerprint
from app.extensions import db
from app.models.package_delivery import FailureClass

KEY = "workspace-1/20261201T020000Z/people-0001.csv.zip"


def _failure(store, key: str = KEY):
    with pytest.raises(Exception) as failed:
        store.put_bytes(key, b"data")
    store.close()
    return destinations.classify_error(failed.value)


def test_a_password_login_writes_reads_and_deletes_under_the_folder(world, sftp_server, sftp_destination):
    store = destinations.open_destination(sftp_destination(world.workspace, path="inbound/rhythm"))
    try:
        assert store.put_stream(KEY, iter([b"ab", b"cd"])) == 4
        assert sftp_server.files() == {f"inbound/rhythm/{KEY}": b"abcd"}
        assert store.read_bytes(KEY) == b"abcd"
        store.delete(KEY)
        store.delete(KEY)  # already gone: nothing to do
    finally:
        store.close()
    assert sftp_server.files() == {}


@pytest.mark.parametrize("which", ["private_key", "rsa_private_key"])
def test_an_ed25519_or_rsa_key_logs_in(world, sftp_server, sftp_destination, which):
    destination = sftp_destination(world.workspace, sftp_login="private_key", secret=getattr(sftp_server, which))
    result = destinations.test_connection(destination)
    assert result.ok, result.message
    assert sftp_server.files() == {}  # the probe is deleted


def test_a_file_is_written_under_a_hidden_temporary_name_and_appears_whole(world, sftp_server, sftp_destination):
    store = destinations.open_destination(sftp_destination(world.workspace, path="inbound"))
    store.put_bytes(KEY, b"the old copy")
    seen_mid_copy = {}

    def chunks():
        yield b"first half, "
        seen_mid_copy.update(sftp_server.files())
        yield b"second half"

    try:
        store.put_stream(KEY, chunks())
    finally:
        store.close()

    # While copying, the customer's name still holds the old copy whole; the new bytes are under
    # a dotted temporary name beside it.
    folder, name = f"inbound/{KEY}".rsplit("/", 1)
    [temporary] = [path for path in seen_mid_copy if path != f"inbound/{KEY}"]
    assert re.fullmatch(rf"{re.escape(folder)}/\.{re.escape(name)}{re.escape(PARTIAL_MARK)}[0-9a-f]+", temporary)
    assert seen_mid_copy[f"inbound/{KEY}"] == b"the old copy"
    # Renamed over the old copy in one step (posix-rename), nothing else left.
    assert sftp_server.renames[-1] == (temporary, f"inbound/{KEY}")
    assert sftp_server.files() == {f"inbound/{KEY}": b"first half, second half"}


def test_a_failed_stream_leaves_no_file_and_no_temporary(world, sftp_server, sftp_destination):
    store = destinations.open_destination(sftp_destination(world.workspace, path="inbound"))

    def failing():
        yield b"partial"
        raise RuntimeError("the source stopped")

    with pytest.raises(RuntimeError):
        store.put_stream(KEY, failing())
    store.close()
    assert sftp_server.files() == {}


def test_an_unpinned_host_gets_nothing_and_its_key_is_offered(world, sftp_server, sftp_destination):
    destination = sftp_destination(world.workspace, host_key=None)
    result = destinations.test_connection(destination)
    assert not result.ok
    assert result.offered_host_key == sftp_server.host_key
    assert fingerprint(sftp_server.host_key) in result.message
    failure = _failure(destinations.open_destination(destination))
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "host_key_not_pinned")
    assert sftp_server.files() == {}


def test_a_changed_host_key_fails_permanently_naming_both_fingerprints(world, sftp_server, sftp_destination):
    destination = sftp_destination(world.workspace)
    pinned = sftp_server.host_key
    sftp_server.replace_host_key()

    failure = _failure(destinations.open_destination(destination))

    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "host_key_changed")
    assert fingerprint(pinned) in failure.summary and fingerprint(sftp_server.host_key) in failure.summary
    assert sftp_server.files() == {}


def test_a_server_that_no_longer_offers_the_pinned_key_type_shows_its_new_key_as_changed(
    world, sftp_server, sftp_destination
):
    destination = sftp_destination(world.workspace)
    sftp_server.replace_host_key("ssh-rsa")

    result = destinations.test_connection(destination)

    assert not result.ok and "host key has changed" in result.message
    assert result.offered_host_key == sftp_server.host_key  # offered for pinning, as any changed key
    destination.host_key = result.offered_host_key  # an RSA host key, once pinned, connects
    db.session.commit()
    assert destinations.test_connection(destination).ok


def test_a_wrong_password_fails_permanently_in_words(world, sftp_server, sftp_destination):
    failure = _failure(destinations.open_destination(sftp_destination(world.workspace, secret="not-the-password")))
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "login_refused")
    assert failure.summary == "The SFTP server refused the login: check the user name and the password."
    assert "not-the-password" not in failure.summary


def test_a_server_that_is_down_fails_transiently(world, sftp_server, sftp_destination):
    destination = sftp_destination(world.workspace)
    sftp_server.stop()
    failure = _failure(destinations.open_destination(destination))
    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT, "connection_refused")
    assert "refused the connection" in failure.summary


def test_something_else_than_ssh_on_the_port_fails_transiently(world, fake_endpoint, sftp_destination):
    port = int(fake_endpoint.url.rsplit(":", 1)[1])
    failure = _failure(destinations.open_destination(sftp_destination(world.workspace, port=port)))
    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT, "ssh_handshake_failed")


def test_the_loopback_is_refused_unless_allowed(world, endpoint_rule_closed, sftp_server, sftp_destination):
    destination = sftp_destination(world.workspace)
    with pytest.raises(destinations.DestinationRefused) as refused:
        destinations.open_destination(destination)
    assert refused.value.code == "endpoint_refused"
    assert not destinations.test_connection(destination).ok


def test_a_key_that_climbs_out_of_the_folder_is_refused(world, sftp_server, sftp_destination):
    store = destinations.open_destination(sftp_destination(world.workspace, path="inbound"))
    with pytest.raises(Exception) as refused:
        store.put_bytes("../outside.txt", b"no")
    store.close()
    assert destinations.classify_error(refused.value).failure_class == FailureClass.PERMANENT
    assert sftp_server.files() == {}


def test_a_stored_path_written_around_the_form_is_refused(world, sftp_destination):
    destination = sftp_destination(world.workspace, path="../../etc")
    with pytest.raises(destinations.DestinationRefused, match="“..”"):
        destinations.open_destination(destination)
