"""What a destination's path, endpoint and message URL may be: the rules the destination form
applies (app/domain/destinations/destination_input.py) and opening a store or sending a message
applies again (app.destinations), so a row written around the form cannot steer a write either.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from urllib.parse import SplitResult, urlsplit

from app.domain.errors import ValidationError
from app.models.export_destination import MESSAGE_URL_LIMIT

PATH_LIMIT = 500
ENDPOINT_LIMIT = 300
HOST_LIMIT = 253  # the longest DNS name
# A server name's labels (letters, digits, hyphens) or an IPv4 address; IPv6 is judged by ipaddress.
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?")
# Unicode categories refused in paths and endpoints: controls, format characters (bidirectional
# overrides and zero-width marks that make a path display differently from what it is), line
# and paragraph separators, surrogates.
_REFUSED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def _refused_character(value: str) -> str | None:
    for character in value:
        if unicodedata.category(character) in _REFUSED_CATEGORIES:
            return f"U+{ord(character):04X}"
    return None


def validate_destination_path(path: str | None) -> str:
    """The relative path inside a bucket or the directory root, normalised ("" for the top).

    Refuses absolute paths, `.` and `..` segments, empty segments, backslashes and control or
    invisible formatting characters, each with a sentence saying which. One trailing slash is
    dropped.
    """
    path = (path or "").strip()
    if not path:
        return ""
    if len(path) > PATH_LIMIT:
        raise ValidationError(f"The destination path is too long: at most {PATH_LIMIT} characters.", "path")
    refused = _refused_character(path)
    if refused is not None:
        raise ValidationError(
            f"The destination path contains a control or invisible character ({refused}); remove it.", "path"
        )
    if path.startswith("/"):
        raise ValidationError("The destination path must be relative: remove the leading “/”.", "path")
    if "\\" in path:
        raise ValidationError("The destination path must separate folders with “/”, not “\\”.", "path")
    if path.endswith("/"):
        path = path[:-1]
    segments = path.split("/")
    if any(segment in (".", "..") for segment in segments):
        raise ValidationError("The destination path must not contain “.” or “..” folders.", "path")
    if any(segment == "" for segment in segments):
        raise ValidationError("The destination path must not contain empty folders (“//”).", "path")
    return path


def validate_endpoint_url(url: str | None) -> str | None:
    """An S3-compatible endpoint: an http or https URL of the server only, or None for AWS itself.

    Refuses credentials in the URL (they would be stored in clear and shown), a query or fragment,
    a path, and characters that are not plain.
    """
    url = (url or "").strip()
    if not url:
        return None
    parts = _plain_url(url, "endpoint_url", "The endpoint", ENDPOINT_LIMIT, "https://host or https://host:port")
    if parts.scheme not in ("http", "https"):
        raise ValidationError("The endpoint must start with https:// or http://.", "endpoint_url")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValidationError(
            "The endpoint must not contain a user name or password; enter the access key and secret in their fields.",
            "endpoint_url",
        )
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValidationError("The endpoint must not have a query (“?…”) or fragment (“#…”).", "endpoint_url")
    if parts.path not in ("", "/"):
        raise ValidationError(
            "The endpoint must be the server's address only; put folders in the destination path.", "endpoint_url"
        )
    return f"{parts.scheme}://{parts.netloc}"


def validate_message_url(url: str | None, field: str, what: str, http_hosts: frozenset[str]) -> str:
    """A webhook's or Slack's URL, which receives messages: https, a server, any path and query.

    Plain http only for a host the operator allows (DESTINATION_ALLOWED_HOSTS, `http_hosts`: a
    receiver on their own network). Refuses a user name or password, a fragment and characters that
    are not plain. `what` names the URL in the sentences ("The webhook URL").
    """
    url = (url or "").strip()
    if not url:
        raise ValidationError(f"Enter {what[0].lower()}{what[1:]}, such as https://example.com/rhythm.", field)
    parts = _plain_url(url, field, what, MESSAGE_URL_LIMIT, "https://example.com/path")
    if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in http_hosts):
        raise ValidationError(f"{what} must start with https://: messages are sent only over HTTPS.", field)
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValidationError(f"{what} must not contain a user name or password.", field)
    if parts.fragment or "#" in url:
        raise ValidationError(f"{what} must not have a fragment (“#…”).", field)
    return url


def _plain_url(url: str, field: str, what: str, limit: int, example: str) -> SplitResult:
    """The URL's parts, once it is plain: not too long, no spaces or invisible characters, a
    server written without %-escapes, a port from 1 to 65535."""
    if len(url) > limit:
        raise ValidationError(f"{what} is too long: at most {limit} characters.", field)
    if _refused_character(url) is not None or any(character.isspace() for character in url):
        raise ValidationError(f"{what} must not contain spaces, control or invisible characters.", field)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValidationError(f"{what} is not a valid URL; enter it as {example}.", field) from None
    if not parts.hostname and parts.scheme in ("http", "https"):
        raise ValidationError(f"{what} must name a server, as in {example}.", field)
    if "%" in parts.netloc:
        # A resolver reads %2e as three characters, a browser or an HTTP library as a dot: the
        # server this names is not one thing, so it is refused rather than judged one way.
        raise ValidationError(
            f"{what}'s server must be written plainly, without %-escapes (such as %2e for a dot).", field
        )
    if port == 0:
        raise ValidationError(f"{what}'s port must be between 1 and 65535.", field)
    return parts


def validate_sftp_host(host: str | None) -> str:
    """An SFTP server's name or address, lowercased, without brackets or a trailing dot: the host
    only, since the port, user and folder have fields of their own."""
    host = (host or "").strip()
    if not host:
        raise ValidationError("Enter the SFTP server's name or address, such as sftp.example.com.", "host")
    if len(host) > HOST_LIMIT:
        raise ValidationError(f"The server's name is too long: at most {HOST_LIMIT} characters.", "host")
    bare = host.strip("[]")
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass
    if not _HOST.fullmatch(host):
        raise ValidationError(
            "Enter the server's name or address only (such as sftp.example.com), without sftp://, a user, "
            "a port or a folder: they have fields of their own.",
            "host",
        )
    return host.rstrip(".").lower()
