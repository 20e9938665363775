"""What a destination's path and endpoint may be: the rules the destination form applies
(app/domain/destinations/destination_input.py) and opening a store applies again (app.destinations), so a
row written around the form cannot steer a write either.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from urllib.parse import urlsplit

from app.domain.errors import ValidationError

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
    if len(url) > ENDPOINT_LIMIT:
        raise ValidationError(f"The endpoint is too long: at most {ENDPOINT_LIMIT} characters.", "endpoint_url")
    if _refused_character(url) is not None or any(character.isspace() for character in url):
        raise ValidationError("The endpoint must not contain spaces, control or invisible characters.", "endpoint_url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValidationError(
            "The endpoint is not a valid URL; enter it as https://host or https://host:port.", "endpoint_url"
        ) from None
    if parts.scheme not in ("http", "https"):
        raise ValidationError("The endpoint must start with https:// or http://.", "endpoint_url")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValidationError(
            "The endpoint must not contain a user name or password; enter the access key and secret in their fields.",
            "endpoint_url",
        )
    if not parts.hostname:
        raise ValidationError(
            "The endpoint must name a server, as in https://host or https://host:port.", "endpoint_url"
        )
    if "%" in parts.netloc:
        # A resolver reads %2e as three characters, a browser or an HTTP library as a dot: the
        # server this names is not one thing, so it is refused rather than judged one way.
        raise ValidationError(
            "The endpoint's server must be written plainly, without %-escapes (such as %2e for a dot).",
            "endpoint_url",
        )
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValidationError("The endpoint must not have a query (“?…”) or fragment (“#…”).", "endpoint_url")
    if parts.path not in ("", "/"):
        raise ValidationError(
            "The endpoint must be the server's address only; put folders in the destination path.", "endpoint_url"
        )
    if port == 0:
        raise ValidationError("The endpoint's port must be between 1 and 65535.", "endpoint_url")
    return f"{parts.scheme}://{parts.netloc}"


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
