"""The rules an SFTP destination is checked by before it is stored."""

from __future__ import annotations

import pytest

from app.domain.destinations.destination_input import DestinationInput, check_destination
from app.domain.destinations.destination_rules import validate_sftp_host
from app.domain.errors import ValidationError

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----"


def sftp_input(**overrides) -> DestinationInput:
    values = {
        "name": "Payroll SFTP",
        "kind": "sftp",
        "bucket": "left-over",
        "region": "us-east-1",
        "endpoint_url": "",
        "access_key_id": "",
        "secret": "",
        "path": "inbound/rhythm/",
        "host": " SFTP.Example.com. ",
        "port": "2222",
        "username": "rhythm",
        "sftp_login": "password",
        "password": " pass phrase ",
        "private_key": "",
    }
    return DestinationInput(**{**values, **overrides})


def test_an_sftp_destination_keeps_its_server_login_and_folder_and_no_bucket():
    checked = check_destination(sftp_input(), creating=True, directory_root_configured=False)
    assert (checked.host, checked.port, checked.username, checked.sftp_login) == (
        "sftp.example.com",
        2222,
        "rhythm",
        "password",
    )
    assert checked.secret == " pass phrase "  # a password is kept as typed
    assert (checked.bucket, checked.region, checked.access_key_id) == (None, None, None)
    assert checked.path == "inbound/rhythm"
    assert checked.connection_key == "sftp:rhythm@sftp.example.com:2222"


def test_the_port_is_22_unless_given():
    assert check_destination(sftp_input(port=""), creating=True, directory_root_configured=False).port == 22


def test_the_private_key_is_the_secret_when_logging_in_with_a_key():
    checked = check_destination(
        sftp_input(sftp_login="private_key", password="ignored", private_key=KEY.replace("\n", "\r\n")),
        creating=True,
        directory_root_configured=False,
    )
    assert checked.secret == KEY + "\n"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"password": ""}, "password"),
        ({"sftp_login": "private_key", "private_key": ""}, "private_key"),
        ({"sftp_login": "private_key", "private_key": "ssh-ed25519 AAAA a public key"}, "private_key"),
        ({"sftp_login": "certificate"}, "sftp_login"),
        ({"username": ""}, "username"),
        ({"username": "two words"}, "username"),
        ({"port": "0"}, "port"),
        ({"port": "65536"}, "port"),
        ({"host": ""}, "host"),
        ({"path": "../etc"}, "path"),
        ({"path": "/home/other"}, "path"),
    ],
)
def test_what_an_sftp_destination_cannot_be_is_refused_on_its_field(overrides, field):
    with pytest.raises(ValidationError) as refused:
        check_destination(sftp_input(**overrides), creating=True, directory_root_configured=False)
    assert refused.value.field == field


def test_an_edit_may_leave_the_secret_empty_to_keep_it():
    checked = check_destination(sftp_input(password=""), creating=False, directory_root_configured=False)
    assert checked.secret is None


@pytest.mark.parametrize(
    "host", ["sftp://sftp.example.com", "user@sftp.example.com", "sftp.example.com:22", "a b", "x/y"]
)
def test_a_host_is_the_server_only(host):
    with pytest.raises(ValidationError, match="name or address only"):
        validate_sftp_host(host)


@pytest.mark.parametrize(
    ("host", "kept"), [("[::1]", "::1"), ("192.0.2.10", "192.0.2.10"), ("Files.Example", "files.example")]
)
def test_addresses_and_names_are_kept_in_one_form(host, kept):
    assert validate_sftp_host(host) == kept
