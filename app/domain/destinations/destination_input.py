"""What a destination must be before it is stored: the form as posted, checked field by field.

Pure checks of what a form sent: each refusal is a ValidationError naming the form field, with a
sentence for the person. What needs the database (how many destinations there are, whether a
connection is taken) is checked by app/services/destinations/registry.py. Paths and endpoints are
checked by the delivery's own rules (destination_rules.py, which app.destinations uses too), so the
form refuses exactly what a delivery would refuse to write to.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass

from app.domain.destinations.destination_rules import (
    validate_destination_path,
    validate_endpoint_url,
    validate_message_url,
    validate_sftp_host,
)
from app.domain.destinations.role_trust import validate_role_arn
from app.domain.errors import ValidationError
from app.domain.values.text_rules import has_unstorable_character, refuse_line_breaks, whole_number
from app.models.export_destination import ANNOUNCING_KINDS, DestinationKind, S3Access, SftpLogin

NAME_LIMIT = 100
REGION_LIMIT = 40
ACCESS_KEY_LIMIT = 128
SECRET_LIMIT = 512
USERNAME_LIMIT = 100
# An RSA key of 16384 bits in PEM is about 12,600 characters; nothing a person pastes is longer.
PRIVATE_KEY_LIMIT = 16_000
SFTP_PORT = 22

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
BUCKET_LIMIT = 63
_BUCKET = re.compile(rf"[a-z0-9][a-z0-9.-]{{1,{BUCKET_LIMIT - 2}}}[a-z0-9]")
_REGION = re.compile(r"[a-z0-9][a-z0-9-]*")
_ACCESS_KEY = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no spaces


@dataclass(frozen=True)
class DestinationInput:
    """The destination form as it was posted. An empty secret on an edit keeps the stored one."""

    name: str
    kind: str
    bucket: str
    region: str
    endpoint_url: str
    access_key_id: str
    secret: str
    path: str
    # An SFTP server's: the password or the private key is its secret, by `sftp_login`.
    host: str = ""
    port: str = ""
    username: str = ""
    sftp_login: str = ""
    password: str = ""
    private_key: str = ""
    # A bucket's: signed with the access key and secret above, or by assuming the role.
    s3_access: str = ""
    role_arn: str = ""
    # A webhook's URL (shown); a Slack incoming webhook's URL (its secret: empty on an edit keeps it).
    url: str = ""
    slack_url: str = ""


@dataclass(frozen=True)
class CheckedDestination:
    name: str
    kind: str
    bucket: str | None
    region: str | None
    endpoint_url: str | None
    access_key_id: str | None
    secret: str | None  # None: keep the stored secret (an edit) or none (a directory)
    path: str
    connection_key: str
    host: str | None = None
    port: int | None = None
    username: str | None = None
    sftp_login: str | None = None
    s3_access: str | None = None
    role_arn: str | None = None
    url: str | None = None


def check_destination(
    data: DestinationInput,
    *,
    creating: bool,
    directory_root_configured: bool,
    role_access_available: bool = False,
    http_hosts: frozenset[str] = frozenset(),
) -> CheckedDestination:
    """The destination as it will be stored; ValidationError names the first bad field.

    The secret is required when an S3 destination signing with a key is created, optional on an
    edit (empty keeps it); one by role has none. `role_access_available`: this installation has
    a principal for customers' roles to trust. `http_hosts`: the hosts a webhook or Slack URL
    may reach over plain http (DESTINATION_ALLOWED_HOSTS); every other one is https.
    """
    name = _checked_name(data.name)
    if data.kind not in tuple(DestinationKind):
        raise ValidationError(
            "Choose the kind of destination: an S3-compatible bucket, an SFTP server, a directory, a webhook or a "
            "Slack channel.",
            "kind",
        )
    if data.kind in ANNOUNCING_KINDS:
        return _checked_receiver(data, name, creating=creating, http_hosts=http_hosts)
    path = validate_destination_path(data.path)
    if data.kind == DestinationKind.DIRECTORY:
        if not directory_root_configured:
            raise ValidationError(
                "Directory destinations are not available on this server (no destinations root is configured); "
                "use an S3-compatible bucket.",
                "kind",
            )
        return CheckedDestination(name, data.kind, None, None, None, None, None, path, "directory:")
    if data.kind == DestinationKind.SFTP:
        return _checked_sftp(data, name, path, creating=creating)
    bucket = check_bucket(data.bucket)
    region = _checked_region(data.region)
    endpoint = validate_endpoint_url(data.endpoint_url)
    # A form from before roles existed, or without the choice, means the stored key it always meant.
    access = data.s3_access or S3Access.ACCESS_KEY
    if access not in tuple(S3Access):
        raise ValidationError("Choose how Rhythm signs in: with an access key or by assuming a role.", "s3_access")
    key = connection_key(endpoint, bucket)
    if access == S3Access.ROLE:
        if not role_access_available:
            raise ValidationError(
                "S3 destinations by role are not available on this installation (it has no AWS principal for "
                "roles to trust); use an access key.",
                "s3_access",
            )
        role_arn = validate_role_arn(data.role_arn)
        return CheckedDestination(
            name, data.kind, bucket, region, endpoint, None, None, path, key, s3_access=access, role_arn=role_arn
        )
    access_key_id = _checked_access_key(data.access_key_id)
    secret = _checked_secret(data.secret, required=creating)
    return CheckedDestination(
        name, data.kind, bucket, region, endpoint, access_key_id, secret, path, key, s3_access=access
    )


def _checked_receiver(
    data: DestinationInput, name: str, *, creating: bool, http_hosts: frozenset[str]
) -> CheckedDestination:
    """A webhook or a Slack channel: a URL that receives messages, and no path. A webhook's
    signing secret is made by Rhythm, not typed (the secret here is None); a Slack URL is the
    secret, required when it is added and kept by an empty field on an edit (connection key "")."""
    if data.kind == DestinationKind.WEBHOOK:
        url = validate_message_url(data.url, "url", "The webhook URL", http_hosts)
        return CheckedDestination(
            name, data.kind, None, None, None, None, None, "", message_connection_key(data.kind, url), url=url
        )
    if not data.slack_url.strip() and not creating:
        return CheckedDestination(name, data.kind, None, None, None, None, None, "", "")
    slack_url = validate_message_url(data.slack_url, "slack_url", "The incoming webhook URL", http_hosts)
    return CheckedDestination(
        name, data.kind, None, None, None, None, slack_url, "", message_connection_key(data.kind, slack_url)
    )


def message_connection_key(kind: str, url: str) -> str:
    """What makes two webhook or Slack destinations the same: their URL, by its SHA-256 (a Slack
    URL is a secret, and the connection key is shown to no one but is audited)."""
    return f"{kind}:{hashlib.sha256(url.encode('utf-8')).hexdigest()}"


def connection_key(endpoint: str | None, bucket: str) -> str:
    """What makes two S3 destinations the same connection: the endpoint (AWS when none) and bucket."""
    return f"s3:{endpoint or 'aws'}/{bucket}"


def _checked_name(text: str) -> str:
    refuse_line_breaks(text or "", "name", "the name")
    name = (text or "").strip()
    if not name:
        raise ValidationError("Give the destination a name.", "name")
    if _CONTROL.search(name) or has_unstorable_character(name):
        raise ValidationError("The name cannot contain control or invalid characters.", "name")
    if len(name) > NAME_LIMIT:
        raise ValidationError(f"The name is at most {NAME_LIMIT} characters.", "name")
    return name


def check_bucket(text: str) -> str:
    """An S3 bucket name by the S3 naming rules."""
    bucket = (text or "").strip()
    if not bucket:
        raise ValidationError("Enter the bucket name.", "bucket")
    rules = (
        f"A bucket name is 3 to {BUCKET_LIMIT} characters of lowercase letters, digits, dots and hyphens, "
        "beginning and ending with a letter or digit."
    )
    if not _BUCKET.fullmatch(bucket):
        raise ValidationError(rules, "bucket")
    if ".." in bucket or ".-" in bucket or "-." in bucket:
        raise ValidationError("A bucket name cannot have two dots together or a dot next to a hyphen.", "bucket")
    if _is_ip_address(bucket):
        raise ValidationError("A bucket name cannot look like an IP address.", "bucket")
    if bucket.startswith(("xn--", "sthree-")) or bucket.endswith(("-s3alias", "--ol-s3")):
        raise ValidationError(
            "A bucket name cannot begin with “xn--” or “sthree-”, or end with “-s3alias” or “--ol-s3”.", "bucket"
        )
    return bucket


def _is_ip_address(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _checked_region(text: str) -> str:
    region = (text or "").strip()
    if not region:
        raise ValidationError(
            "Enter the bucket's region, such as eu-west-1 (us-east-1 for most other stores).", "region"
        )
    if len(region) > REGION_LIMIT or not _REGION.fullmatch(region):
        raise ValidationError("A region is lowercase letters, digits and hyphens, such as eu-west-1.", "region")
    return region


def _checked_access_key(text: str) -> str:
    key = (text or "").strip()
    if not key:
        raise ValidationError("Enter the access key id.", "access_key_id")
    if len(key) > ACCESS_KEY_LIMIT or not _ACCESS_KEY.fullmatch(key):
        raise ValidationError(
            f"An access key id is at most {ACCESS_KEY_LIMIT} printable characters without spaces.", "access_key_id"
        )
    return key


def check_secret(text: str) -> str:
    """A secret access key to be encrypted; never echoed back in a message."""
    secret = (text or "").strip()
    if not secret:
        raise ValidationError("Enter the secret access key.", "secret")
    if len(secret) > SECRET_LIMIT or not _ACCESS_KEY.fullmatch(secret):
        raise ValidationError(
            f"A secret access key is at most {SECRET_LIMIT} printable characters without spaces.", "secret"
        )
    return secret


def _checked_secret(text: str, required: bool) -> str | None:
    if not (text or "").strip() and not required:
        return None
    return check_secret(text)


def _checked_sftp(data: DestinationInput, name: str, path: str, *, creating: bool) -> CheckedDestination:
    """An SFTP server's destination. The password or private key is required when it is created,
    optional on an edit (empty keeps the stored one); whether a pasted key is one an SSH client
    reads is judged where keys are read (app.destinations.sftp)."""
    host = validate_sftp_host(data.host)
    port = whole_number(
        data.port or str(SFTP_PORT), "port", "Enter the port, a whole number from 1 to 65535.", 1, 65535
    )
    username = (data.username or "").strip()
    if not username:
        raise ValidationError("Enter the user name the server knows.", "username")
    if len(username) > USERNAME_LIMIT or not _ACCESS_KEY.fullmatch(username):
        raise ValidationError(
            f"A user name is at most {USERNAME_LIMIT} printable characters without spaces.", "username"
        )
    if data.sftp_login not in tuple(SftpLogin):
        raise ValidationError("Choose how Rhythm logs in: with a password or a private key.", "sftp_login")
    if data.sftp_login == SftpLogin.PASSWORD:
        secret = _checked_password(data.password, required=creating)
    else:
        secret = _checked_private_key(data.private_key, required=creating)
    return CheckedDestination(
        name,
        data.kind,
        None,
        None,
        None,
        None,
        secret,
        path,
        sftp_connection_key(username, host, port),
        host=host,
        port=port,
        username=username,
        sftp_login=data.sftp_login,
    )


def sftp_connection_key(username: str, host: str, port: int) -> str:
    """What makes two SFTP destinations the same connection: who logs in, where."""
    return f"sftp:{username}@{host}:{port}"


def _checked_password(text: str, required: bool) -> str | None:
    """A password as typed (spaces are part of it); never echoed back in a message."""
    if not text:
        if required:
            raise ValidationError("Enter the password.", "password")
        return None
    if len(text) > SECRET_LIMIT or _CONTROL.search(text) or has_unstorable_character(text):
        raise ValidationError(
            f"A password is at most {SECRET_LIMIT} characters without control characters.", "password"
        )
    return text


def _checked_private_key(text: str, required: bool) -> str | None:
    """A pasted private key in OpenSSH's or PEM's text form; never echoed back in a message."""
    key = (text or "").strip().replace("\r\n", "\n")
    if not key:
        if required:
            raise ValidationError("Paste the private key.", "private_key")
        return None
    if len(key) > PRIVATE_KEY_LIMIT or not (key.startswith("-----BEGIN ") and "PRIVATE KEY-----" in key):
        raise ValidationError(
            "Paste the whole private key, from “-----BEGIN … PRIVATE KEY-----” to its END line.", "private_key"
        )
    return key + "\n"
