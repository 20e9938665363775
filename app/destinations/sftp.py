"""An SFTP server as a delivery destination (paramiko).

Connecting: the TCP connection is made by the endpoint rule (`connect_checked`), so only an
address it allows is reached. The SSH handshake hands over the server's host key, which must be
the one an administrator pinned before anything else happens: no password or key signature ever
goes to a server that is not the pinned one, and no delivery to a server with no key pinned. The
pinned key's type is asked for first, so a server with several keys shows the pinned one (and a
server that dropped that type shows another key, refused as changed and offered for pinning).
Then the login, by password or private key.

Writing: each object goes to a temporary name beside its target (`.<name>` + PARTIAL_MARK +
random), renamed over the target when whole with OpenSSH's posix-rename@openssh.com, which
replaces an existing file in one step (SFTP v3's own rename refuses an existing target). A
reader sees the old file or the whole new one, never part of one; the leading dot keeps the
temporary file out of readers that skip hidden files. A failed write removes its temporary file.

Paths: the destination's folder and the objects' keys are relative (the path rule and
`check_key` refuse `..` and a leading `/`), so everything lands under the login's own folder.

Errors: paramiko's and the network's are turned here into DestinationRefused (permanent: the
login refused, the host key not pinned or changed, permission denied) or DestinationUnavailable
(transient: the server down, slow or failing), each with a sentence for people that never holds
the server's own text or a secret.
"""

from __future__ import annotations

import contextlib
import io
import secrets
import socket
import stat
from base64 import b64decode
from collections.abc import Iterable, Iterator

import paramiko

from app.destinations.base import DestinationRefused, DestinationStore, DestinationUnavailable
from app.destinations.endpoint_rule import connect_checked
from app.storage.base import StorageError, check_key

CONNECT_TIMEOUT_SECONDS = 10
# How long one SFTP request may wait for the server's answer.
REQUEST_TIMEOUT_SECONDS = 30
PARTIAL_MARK = ".rhythm-partial-"
# An RSA host key ("ssh-rsa") is offered under any of its signature names; the key is the same.
_RSA_NAMES = ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa")
_KEY_CLASSES = (paramiko.Ed25519Key, paramiko.RSAKey)


# Keys


def host_key_line(key: paramiko.PKey) -> str:
    """A host key as known_hosts writes it, without the host: "<type> <base64>"."""
    return f"{key.get_name()} {key.get_base64()}"


def fingerprint(key_line: str) -> str:
    """The key's SHA256 fingerprint and type as `ssh-keygen -l` shows them: "SHA256:… (ED25519)"."""
    name, _, body = key_line.partition(" ")
    key = paramiko.PKey.from_type_string(name, b64decode(body))
    kind = {"ssh-ed25519": "ED25519", "ssh-rsa": "RSA"}.get(name, name.split("-")[0].upper())
    return f"{key.fingerprint} ({kind})"


def load_private_key(text: str) -> paramiko.PKey:
    """An Ed25519 or RSA private key pasted in OpenSSH's or PEM's text form, without a passphrase.
    DestinationRefused (code `private_key_unreadable`) saying what is wrong with it otherwise."""
    for key_class in _KEY_CLASSES:
        try:
            return key_class.from_private_key(io.StringIO(text))
        except paramiko.PasswordRequiredException:
            raise DestinationRefused(
                "The private key is protected by a passphrase; paste a key without one (made for Rhythm alone).",
                "private_key_unreadable",
            ) from None
        except (paramiko.SSHException, ValueError, TypeError, IndexError):
            continue
    raise DestinationRefused(
        "The private key could not be read: paste an Ed25519 or RSA private key whole, as ssh-keygen wrote it.",
        "private_key_unreadable",
    )


class HostKeyNotPinned(DestinationRefused):
    """The server's host key is not pinned yet: nothing is sent to it until an administrator pins it."""

    def __init__(self, offered_host_key: str):
        super().__init__(
            f"The server's host key is {fingerprint(offered_host_key)} and is not pinned yet, so nothing is sent "
            "to it. If the server's administrator confirms that fingerprint, pin it on the destination's page.",
            "host_key_not_pinned",
        )
        self.offered_host_key = offered_host_key


class HostKeyChanged(DestinationRefused):
    """The server offered a host key other than the pinned one: another server may be answering."""

    def __init__(self, offered_host_key: str, pinned_host_key: str):
        super().__init__(
            f"The server's host key has changed: it is now {fingerprint(offered_host_key)}, but "
            f"{fingerprint(pinned_host_key)} is pinned. Another server may be answering in its place; nothing was "
            "sent. If the server's administrator confirms the new key, pin it on the destination's page.",
            "host_key_changed",
        )
        self.offered_host_key = offered_host_key


# Errors


def _network_failure(exc: OSError) -> DestinationUnavailable:
    if isinstance(exc, socket.gaierror):
        return DestinationUnavailable("The SFTP server's name could not be found.", "name_not_found")
    if isinstance(exc, ConnectionRefusedError):
        return DestinationUnavailable(
            "The SFTP server refused the connection: nothing accepts connections at that address and port.",
            "connection_refused",
        )
    if isinstance(exc, TimeoutError):
        return DestinationUnavailable(
            f"The SFTP server did not answer within {CONNECT_TIMEOUT_SECONDS} seconds.", "timeout"
        )
    return DestinationUnavailable("The SFTP server could not be reached.", "connection_failed")


@contextlib.contextmanager
def _request_errors(shown: str) -> Iterator[None]:
    """A failed SFTP request in people's words; the product's own storage's errors pass as they are."""
    try:
        yield
    except (StorageError, DestinationRefused, DestinationUnavailable):
        raise
    except (PermissionError, FileNotFoundError) as exc:  # paramiko's errno for SFTP's refusals
        what = "permission denied" if isinstance(exc, PermissionError) else "a folder on the way does not exist"
        raise DestinationRefused(
            f"The SFTP server refused to write or read {shown}: {what}.",
            "sftp_permission_denied" if isinstance(exc, PermissionError) else "sftp_not_found",
        ) from exc
    except TimeoutError as exc:
        raise DestinationUnavailable(
            f"The SFTP server stopped answering for {REQUEST_TIMEOUT_SECONDS} seconds while writing {shown}.",
            "timeout",
        ) from exc
    except (paramiko.SSHException, EOFError, OSError) as exc:
        raise DestinationUnavailable(
            f"The SFTP server failed a request while writing {shown} (its disk may be full, or it closed the "
            "connection); a later attempt may work.",
            "sftp_failed",
        ) from exc


# The store


class SftpDestination(DestinationStore):
    """Objects under `path` in the login's folder on one SFTP server; connects at the first request."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        username: str,
        password: str | None,
        private_key: str | None,
        host_key: str | None,
        path: str,
        allowed_hosts: frozenset[str],
    ):
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.private_key = private_key
        self.host_key = host_key
        self.path = path.strip("/")
        self.allowed_hosts = allowed_hosts
        self._transport: paramiko.Transport | None = None
        self._client: paramiko.SFTPClient | None = None
        self._folders: set[str] = set()

    def _sftp(self) -> paramiko.SFTPClient:
        if self._client is None:
            self._client = self._connect()
        return self._client

    def _connect(self) -> paramiko.SFTPClient:
        try:
            sock = connect_checked(self.host, self.port, self.allowed_hosts, CONNECT_TIMEOUT_SECONDS)
        except OSError as exc:
            raise _network_failure(exc) from exc
        transport = paramiko.Transport(sock)
        self._transport = transport
        transport.banner_timeout = transport.handshake_timeout = CONNECT_TIMEOUT_SECONDS
        transport.auth_timeout = REQUEST_TIMEOUT_SECONDS
        if self.host_key is not None:
            options = transport.get_security_options()
            pinned_name = self.host_key.split(" ", 1)[0]
            wanted = _RSA_NAMES if pinned_name == "ssh-rsa" else (pinned_name,)
            pinned = [name for name in options.key_types if name in wanted]  # those this paramiko speaks
            options.key_types = (*pinned, *(name for name in options.key_types if name not in pinned))
        try:
            transport.start_client(timeout=CONNECT_TIMEOUT_SECONDS)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise DestinationUnavailable(
                "The server at that address and port did not complete an SSH handshake; check they are the "
                "SFTP server's.",
                "ssh_handshake_failed",
            ) from exc
        offered = host_key_line(transport.get_remote_server_key())
        if self.host_key is None:
            raise HostKeyNotPinned(offered)
        if offered != self.host_key:
            raise HostKeyChanged(offered, self.host_key)
        self._log_in(transport)
        with _request_errors("the destination"):
            client = paramiko.SFTPClient.from_transport(transport)
            channel = client.get_channel() if client is not None else None
            if client is None or channel is None:
                raise paramiko.SSHException("the server opened no SFTP session")
            channel.settimeout(REQUEST_TIMEOUT_SECONDS)
        return client

    def _log_in(self, transport: paramiko.Transport) -> None:
        try:
            if self.private_key is not None:
                transport.auth_publickey(self.username, load_private_key(self.private_key))
            else:
                transport.auth_password(self.username, self.password or "")
        except paramiko.AuthenticationException as exc:
            secret = (
                "private key (its public key must be in the user’s authorized_keys)" if self.private_key else "password"
            )
            raise DestinationRefused(
                f"The SFTP server refused the login: check the user name and the {secret}.", "login_refused"
            ) from exc
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise DestinationUnavailable(
                "The SFTP server closed the connection during the login; a later attempt may work.", "login_failed"
            ) from exc

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self._transport = self._client = None
        self._folders.clear()

    def _remote(self, relative_key: str) -> str:
        check_key(relative_key)
        return f"{self.path}/{relative_key}" if self.path else relative_key

    def location(self, relative_key: str = "") -> str:
        where = self._remote(relative_key) if relative_key else self.path
        return f"sftp://{self.username}@{self.host}:{self.port}/{where}"

    def _make_folders(self, remote: str) -> None:
        """Every folder above `remote`, made where missing (the login's own folder is the top)."""
        sftp = self._sftp()
        parts = remote.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder in self._folders:
                continue
            try:
                if not stat.S_ISDIR(sftp.stat(folder).st_mode or 0):
                    raise DestinationRefused(
                        f"{self.location()} cannot hold the package: {folder} is a file, not a folder.",
                        "sftp_not_folder",
                    )
            except FileNotFoundError:
                sftp.mkdir(folder)
            self._folders.add(folder)

    def put_bytes(self, relative_key: str, data: bytes) -> None:
        self.put_stream(relative_key, [data])

    def put_stream(self, relative_key: str, chunks: Iterable[bytes]) -> int:
        remote = self._remote(relative_key)
        folder, _, name = remote.rpartition("/")
        temporary = f"{folder}/.{name}" if folder else f".{name}"
        temporary += PARTIAL_MARK + secrets.token_hex(6)
        with _request_errors(remote):
            self._make_folders(remote)
            sftp = self._sftp()
            size = 0
            try:
                with sftp.open(temporary, "wb") as handle:
                    handle.set_pipelined(True)
                    for chunk in chunks:
                        handle.write(chunk)
                        size += len(chunk)
                sftp.posix_rename(temporary, remote)
            except BaseException:
                # The transfer's own failure is the one to report, not a failed clean-up.
                with contextlib.suppress(Exception):
                    sftp.remove(temporary)
                raise
        return size

    def read_bytes(self, relative_key: str) -> bytes:
        remote = self._remote(relative_key)
        with _request_errors(remote), self._sftp().open(remote, "rb") as handle:
            return handle.read()

    def delete(self, relative_key: str) -> None:
        remote = self._remote(relative_key)
        with _request_errors(remote), contextlib.suppress(FileNotFoundError):
            self._sftp().remove(remote)
