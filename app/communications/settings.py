"""Mail settings, parsed once from MAIL_URL, MAIL_FROM and the login settings.

`MAIL_URL` is either a folder for `.eml` files (`file:///absolute/path`) or an SMTP server:
`smtp://host:port` (plain), `smtp+starttls://host:port` or `smtp://host:port?starttls=1`
(STARTTLS), `smtps://host:port` (TLS from the first byte). A login comes from the URL's
`user:password@` or, when the URL has none, from MAIL_USERNAME and MAIL_PASSWORD.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.utils import parseaddr
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

_EXPECTED = "expected file:///absolute/path, smtp://host:port, smtp+starttls://host:port or smtps://host:port"


class Security(enum.StrEnum):
    PLAIN = "plain"
    STARTTLS = "starttls"
    TLS = "tls"


_SCHEMES = {"smtp": Security.PLAIN, "smtp+starttls": Security.STARTTLS, "smtps": Security.TLS}
_DEFAULT_PORTS = {Security.PLAIN: 25, Security.STARTTLS: 587, Security.TLS: 465}


@dataclass(frozen=True)
class MailSettings:
    """Where mail goes and who sends it. Exactly one of `outbox` and `host` is set."""

    sender: Address
    timeout_seconds: float
    outbox: Path | None = None
    host: str | None = None
    port: int | None = None
    security: Security = Security.PLAIN
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def domain(self) -> str:
        """The sender's domain: the right-hand side of every Message-ID this product makes."""
        return self.sender.domain

    @property
    def server(self) -> str:
        """The server as `host:port`, for logs and error summaries (never the login)."""
        return f"{self.host}:{self.port}"


def parse_sender(value: str) -> Address:
    """MAIL_FROM (`Name <address>` or a bare address) as an Address; ValueError when unusable."""
    if any(ch in value for ch in "\r\n\0"):
        raise ValueError("MAIL_FROM must be one line")
    name, address = parseaddr(value)
    try:
        sender = Address(display_name=name, addr_spec=address)
    except (HeaderParseError, ValueError, IndexError) as exc:
        raise ValueError(
            f"MAIL_FROM {value!r} is not an address such as 'Rhythm Exports <exports@example.com>'"
        ) from exc
    if not sender.username or not sender.domain:
        raise ValueError(f"MAIL_FROM {value!r} is not an address such as 'Rhythm Exports <exports@example.com>'")
    return sender


def parse_mail_settings(
    url: str,
    sender: str,
    username: str | None = None,
    password: str | None = None,
    timeout_seconds: float = 30.0,
) -> MailSettings:
    """The settings these values name; ValueError (never quoting a password) for anything else."""
    if timeout_seconds <= 0:
        raise ValueError(f"MAIL_TIMEOUT must be positive, not {timeout_seconds}")
    parsed_sender = parse_sender(sender)
    parts = urlsplit(url)
    # The URL may hold a password: messages name the scheme and host, never the URL itself.
    if parts.scheme == "file":
        path = unquote(parts.path)
        if parts.netloc not in ("", "localhost") or not path.startswith("/") or parts.query or parts.fragment:
            raise ValueError(f"MAIL_URL with scheme file is not an absolute folder path; {_EXPECTED}")
        return MailSettings(sender=parsed_sender, timeout_seconds=timeout_seconds, outbox=Path(path))
    if parts.scheme not in _SCHEMES:
        raise ValueError(f"MAIL_URL has the unsupported scheme {parts.scheme!r}; {_EXPECTED}")
    security = _SCHEMES[parts.scheme]
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = set(options) - {"starttls"}
    if unknown or parts.fragment or parts.path not in ("", "/"):
        raise ValueError(f"MAIL_URL may only carry the option starttls=1 after the host; {_EXPECTED}")
    if "starttls" in options:
        if options["starttls"] not in ("0", "1") or security is Security.TLS:
            raise ValueError("MAIL_URL option starttls must be 0 or 1, and only with smtp://")
        if options["starttls"] == "1":
            security = Security.STARTTLS
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"MAIL_URL has an invalid port; {_EXPECTED}") from exc
    if not parts.hostname:
        raise ValueError(f"MAIL_URL names no host; {_EXPECTED}")
    if parts.username is not None:
        username, password = unquote(parts.username), unquote(parts.password or "")
    if bool(username) != bool(password):
        raise ValueError("an SMTP login needs both a user name and a password")
    return MailSettings(
        sender=parsed_sender,
        timeout_seconds=timeout_seconds,
        host=parts.hostname,
        port=port or _DEFAULT_PORTS[security],
        security=security,
        username=username or None,
        password=password or None,
    )
