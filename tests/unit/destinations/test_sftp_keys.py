"""SFTP keys: the host key's fingerprint as ssh-keygen shows it, the private keys a person may paste,
and how the host-key refusals read and are classified."""

from __future__ import annotations

import subprocess

import paramiko
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from app.destinations import DestinationRefused, DestinationUnavailable, classify_error
from app.destinations.sftp import HostKeyChanged, HostKeyNotPinned, fingerprint, load_private_key
from app.models.package_delivery import FailureClass


def _openssh_private(key, password: bytes | None = None) -> str:
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, encryption).decode()


def _public_line(key) -> str:
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


@pytest.mark.parametrize("make", [ed25519.Ed25519PrivateKey.generate, lambda: rsa.generate_private_key(65537, 2048)])
def test_the_fingerprint_is_the_one_ssh_keygen_shows(make, tmp_path):
    key = make()
    line = _public_line(key)
    (tmp_path / "key.pub").write_text(line + "\n")
    shown = subprocess.run(
        ["ssh-keygen", "-l", "-E", "sha256", "-f", str(tmp_path / "key.pub")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    # ssh-keygen: "<bits> SHA256:<hash> <comment> (<TYPE>)"
    assert fingerprint(line) == f"{shown[1]} {shown[-1]}"


def test_ed25519_and_rsa_keys_are_read_in_openssh_and_pem_forms():
    ed = ed25519.Ed25519PrivateKey.generate()
    assert isinstance(load_private_key(_openssh_private(ed)), paramiko.Ed25519Key)
    rsa_key = rsa.generate_private_key(65537, 2048)
    assert isinstance(load_private_key(_openssh_private(rsa_key)), paramiko.RSAKey)
    pem = rsa_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()
    assert isinstance(load_private_key(pem), paramiko.RSAKey)


def test_a_key_with_a_passphrase_or_not_a_key_is_refused_in_words():
    with pytest.raises(DestinationRefused, match="passphrase"):
        load_private_key(_openssh_private(ed25519.Ed25519PrivateKey.generate(), b"secret words"))
    with pytest.raises(DestinationRefused, match="Ed25519 or RSA"):
        load_private_key("-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n-----END OPENSSH PRIVATE KEY-----\n")


def test_a_changed_host_key_fails_permanently_with_both_fingerprints():
    pinned = _public_line(ed25519.Ed25519PrivateKey.generate())
    offered = _public_line(ed25519.Ed25519PrivateKey.generate())
    failure = classify_error(HostKeyChanged(offered, pinned))
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "host_key_changed")
    assert fingerprint(offered) in failure.summary and fingerprint(pinned) in failure.summary


def test_an_unpinned_host_fails_permanently_and_shows_its_fingerprint():
    offered = _public_line(ed25519.Ed25519PrivateKey.generate())
    failure = classify_error(HostKeyNotPinned(offered))
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "host_key_not_pinned")
    assert fingerprint(offered) in failure.summary


def test_an_unavailable_server_is_transient_in_its_own_words():
    failure = classify_error(DestinationUnavailable("The SFTP server refused the connection.", "connection_refused"))
    assert failure == type(failure)(
        FailureClass.TRANSIENT, "connection_refused", "The SFTP server refused the connection."
    )
