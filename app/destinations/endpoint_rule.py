"""Which addresses a customer's S3 endpoint or SFTP server may lead to: the public internet only.

An administrator types the endpoint, and the server connects to it: left unchecked, "Test
connection" would let them probe the server's own network (a database port, the cloud metadata
service at 169.254.169.254). So an endpoint is refused when its server resolves to a loopback,
link-local, private, shared, multicast, unspecified or reserved address, IPv4 or IPv6 (an IPv4
address inside an IPv6 one is judged as the IPv4 one; `localhost` and every name under it are
loopback, RFC 6761), unless the operator names the host in
DESTINATION_ALLOWED_HOSTS (an on-premises MinIO, say).

The rule is applied three times, always through `refuse_internal_endpoint` (or
`refuse_internal_host`) and `refused_reason`: when the form is saved, before a store is opened
or a message sent (Test connection and every delivery), and at connection time by `guard_client`
(an S3 client), `connect_checked` (an SFTP server) or `guarded_pool` (a webhook or Slack
receiver), which resolve the name themselves, check every address and connect only to an
address they checked, so a name that resolves to a public address for the
first check and to an internal one a moment later (DNS rebinding) still cannot be reached.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util import Timeout
from urllib3.util import connection as urllib3_connection

from app.destinations.base import DestinationRefused

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ENDPOINT_REFUSED = "endpoint_refused"
# An address inside NAT64's well-known prefix reaches the IPv4 address in its last 32 bits.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# A name resolving to more addresses than this is tried at these only: each costs a connect timeout.
_ADDRESSES_TRIED = 3


def parse_allowed_hosts(text: str | None) -> frozenset[str]:
    """DESTINATION_ALLOWED_HOSTS: comma-separated host names or addresses, compared without case."""
    return frozenset(_normal_host(part) for part in (text or "").split(",") if part.strip())


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _judged(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def refused_reason(address: IPAddress) -> str | None:
    """What kind of internal address this is, for a sentence; None for a public address."""
    address = _judged(address)
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address (this server itself)"
    if address.is_link_local:
        return "a link-local address (such as a cloud metadata service)"
    if address.is_multicast:
        return "a multicast address"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private:
        return "a private-network address"
    if not address.is_global:
        return "an address that is not on the public internet"
    return None


def _refusal(host: str, reason: str) -> DestinationRefused:
    return DestinationRefused(
        f"The endpoint's server {host} leads to {reason}. Destinations must be on the public internet; "
        "an operator can allow a host on the server's own network with DESTINATION_ALLOWED_HOSTS.",
        ENDPOINT_REFUSED,
    )


# RFC 6761: "localhost" and every name under it are the loopback addresses, whatever this
# server's resolver answers for them (or fails to answer) today.
_LOOPBACK_ADDRESSES: list[IPAddress] = [ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv6Address("::1")]


def _resolve(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to, in the resolver's order. socket.gaierror when none."""
    if host == "localhost" or host.endswith(".localhost"):
        return list(_LOOPBACK_ADDRESSES)
    addresses: list[IPAddress] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def _checked_addresses(host: str, port: int, allowed_hosts: frozenset[str]) -> list[IPAddress]:
    """The addresses to connect to for `host`, every one checked; DestinationRefused when any is internal."""
    addresses = _resolve(host, port)
    for address in addresses:
        reason = refused_reason(address)
        if reason is not None and str(_judged(address)) not in allowed_hosts and str(address) not in allowed_hosts:
            raise _refusal(host, reason)
    return addresses


def refuse_internal_endpoint(endpoint_url: str | None, allowed_hosts: frozenset[str]) -> None:
    """DestinationRefused when the endpoint's server resolves to an internal address and is not allowed.

    No endpoint (AWS itself) passes. A name that does not resolve passes too: there is nothing to
    reach, and the connection's own check stands if it resolves later.
    """
    if not endpoint_url:
        return
    parts = urlsplit(endpoint_url)
    refuse_internal_host(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80), allowed_hosts)


def refuse_internal_host(host: str, port: int, allowed_hosts: frozenset[str]) -> None:
    """The same rule for a server named by its host and port (an SFTP server)."""
    host = _normal_host(host)
    if not host or host in allowed_hosts:
        return
    try:
        _checked_addresses(host, port, allowed_hosts)
    except (socket.gaierror, UnicodeError):
        return


def connect_checked(host: str, port: int, allowed_hosts: frozenset[str], timeout: float) -> socket.socket:
    """A TCP connection to `host` made only to an address the rule allows, checked as it connects
    (for clients that take a socket, such as SSH's). DestinationRefused for an internal address;
    the system's error (socket.gaierror, ConnectionRefusedError, TimeoutError) when none answers."""
    host = _normal_host(host)
    if host in allowed_hosts:
        return socket.create_connection((host, port), timeout)
    failure: OSError | None = None
    for address in _checked_addresses(host, port, allowed_hosts)[:_ADDRESSES_TRIED]:
        try:
            return socket.create_connection((str(address), port), timeout)
        except OSError as exc:
            failure = exc
    assert failure is not None
    raise failure


class _GuardedConnection:
    """Connects only to addresses the endpoint rule allows, checked at the moment of connecting."""

    allowed_hosts: frozenset[str] = frozenset()
    host: str
    port: int
    timeout: float | None
    source_address: tuple[str, int] | None
    socket_options: list | None

    def _new_conn(self) -> socket.socket:
        host = _normal_host(self.host)
        if host in self.allowed_hosts:
            return super()._new_conn()  # type: ignore[misc]
        try:
            addresses = _checked_addresses(host, self.port, self.allowed_hosts)
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc  # type: ignore[arg-type]
        return self._connect_to_any(addresses[:_ADDRESSES_TRIED])

    def _connect_to_any(self, addresses: Iterable[IPAddress]) -> socket.socket:
        failure: Exception | None = None
        for address in addresses:
            try:
                sock = urllib3_connection.create_connection(
                    (str(address), self.port),
                    self.timeout,
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
            except TimeoutError as exc:
                failure = ConnectTimeoutError(self, f"Connection to {self.host} timed out.")
                failure.__cause__ = exc
                continue
            except OSError as exc:
                failure = NewConnectionError(self, f"Failed to establish a new connection: {exc}")  # type: ignore[arg-type]
                failure.__cause__ = exc
                continue
            peer = ipaddress.ip_address(str(sock.getpeername()[0]).split("%", 1)[0])
            if peer != address:  # never expected; refuse rather than trust a socket we did not aim
                sock.close()
                raise _refusal(self.host, "an address other than the one checked")
            return sock
        assert failure is not None
        raise failure


def _pool_classes(allowed_hosts: frozenset[str]) -> dict[str, type]:
    # Imported only when an S3 client is made: the rule itself (config.py, SFTP, the form) needs
    # no botocore, and a job delivering nowhere near S3 should not load it.
    from botocore.awsrequest import AWSHTTPConnection, AWSHTTPConnectionPool, AWSHTTPSConnection, AWSHTTPSConnectionPool

    settings = {"allowed_hosts": allowed_hosts}
    http_connection = type("GuardedHTTPConnection", (_GuardedConnection, AWSHTTPConnection), settings)
    https_connection = type("GuardedHTTPSConnection", (_GuardedConnection, AWSHTTPSConnection), settings)
    return {
        "http": type("GuardedHTTPConnectionPool", (AWSHTTPConnectionPool,), {"ConnectionCls": http_connection}),
        "https": type("GuardedHTTPSConnectionPool", (AWSHTTPSConnectionPool,), {"ConnectionCls": https_connection}),
    }


def guard_client(client, allowed_hosts: frozenset[str]) -> None:
    """Make the boto3 client's connections obey the endpoint rule.

    botocore's HTTP session picks its urllib3 pool classes from `_pool_classes_by_scheme`; there is
    no public way to choose them. If a botocore upgrade renames it, this fails at once (the client
    is never used unguarded) rather than silently.
    """
    session = client._endpoint.http_session
    if not hasattr(session, "_pool_classes_by_scheme") or not hasattr(session, "_manager"):
        raise RuntimeError("botocore's HTTP session changed: the endpoint rule cannot guard its connections")
    classes = _pool_classes(allowed_hosts)
    session._pool_classes_by_scheme = classes
    session._manager.pool_classes_by_scheme = classes
    session._manager.clear()


def guarded_pool(
    scheme: str, host: str, port: int | None, allowed_hosts: frozenset[str], timeout: Timeout
) -> HTTPConnectionPool:
    """A urllib3 connection pool to one server (a webhook or Slack receiver) whose connections
    obey the endpoint rule, checked as each one connects."""
    https = scheme == "https"
    base = HTTPSConnection if https else HTTPConnection
    connection = type(f"Guarded{base.__name__}", (_GuardedConnection, base), {"allowed_hosts": allowed_hosts})
    pool = (HTTPSConnectionPool if https else HTTPConnectionPool)(host, port, timeout=timeout, maxsize=1)
    pool.ConnectionCls = connection
    return pool
