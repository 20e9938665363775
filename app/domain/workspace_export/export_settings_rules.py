"""What workspace export settings and destinations must be before they are stored.

Pure checks of what a form sent: each refusal is a ValidationError naming the form field, with a
sentence for the person. What needs the database (who is a member, how many destinations there
are, whether a connection is taken) is looked up by the services and passed in or checked there.
Destination paths and endpoints are checked by the delivery's own rules (app.destinations), so the
form refuses exactly what a delivery would refuse to write to.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from app.domain.errors import ValidationError
from app.domain.timing.timetable import WEEKDAY_NAMES
from app.domain.values.text_rules import has_unstorable_character, refuse_line_breaks, refuse_unstorable, whole_number
from app.domain.workspace_export.coverage import DECLARATIONS, CoverageStatus
from app.domain.workspace_export.destination_rules import (
    validate_destination_path,
    validate_endpoint_url,
    validate_sftp_host,
)
from app.domain.workspace_export.export_cadence import cadence_timetable
from app.domain.workspace_export.role_trust import validate_role_arn
from app.models.export_destination import DestinationKind, S3Access, SftpLogin
from app.models.export_settings import (
    MAX_NOTIFY_PEOPLE,
    RETENTION_DAYS,
    VOLUME_SIZE_MB,
    Cadence,
    PackageFormat,
    SettingsStatus,
)

NAME_LIMIT = 100
REGION_LIMIT = 40
ACCESS_KEY_LIMIT = 128
SECRET_LIMIT = 512
USERNAME_LIMIT = 100
# An RSA key of 16384 bits in PEM is about 12,600 characters; nothing a person pastes is longer.
PRIVATE_KEY_LIMIT = 16_000
SFTP_PORT = 22
# What an administrator may choose; "suspended" is set by staff only.
CHOOSABLE_STATUSES = (SettingsStatus.ACTIVE, SettingsStatus.PAUSED)

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
BUCKET_LIMIT = 63
_BUCKET = re.compile(rf"[a-z0-9][a-z0-9.-]{{1,{BUCKET_LIMIT - 2}}}[a-z0-9]")
_REGION = re.compile(r"[a-z0-9][a-z0-9-]*")
_ACCESS_KEY = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no spaces


def active_datasets() -> tuple[str, ...]:
    """The datasets a package may include now, in the registry's order."""
    return tuple(d.dataset for d in DECLARATIONS if d.status == CoverageStatus.ACTIVE)


# Settings


@dataclass(frozen=True)
class SettingsInput:
    """The settings form as it was posted: texts and lists of texts."""

    datasets: list[str]
    format: str
    volume_size_mb: str
    retention_days: str
    cadence: str
    cadence_time: str
    cadence_weekday: str
    cadence_day: str
    notify_person_ids: list[str]
    status: str


@dataclass(frozen=True)
class CheckedSettings:
    datasets: list[str]
    format: str
    volume_size_mb: int
    retention_days: int
    cadence: str
    cadence_time: str
    cadence_weekday: int | None
    cadence_day: int | None
    notify_person_ids: list[int]
    status: str


def check_settings(data: SettingsInput, member_ids: frozenset[int], zone: str) -> CheckedSettings:
    """The settings as they will be stored; ValidationError names the first bad field.

    `member_ids` are the workspace's current members (the people who may be notified); `zone`
    is the workspace's time zone, the cadence's clock.
    """
    refuse_unstorable(
        [
            data.datasets,
            data.format,
            data.volume_size_mb,
            data.retention_days,
            data.cadence,
            data.cadence_time,
            data.cadence_weekday,
            data.cadence_day,
            data.notify_person_ids,
            data.status,
        ],
        "form",
        "the form",
    )
    datasets = _checked_datasets(data.datasets)
    if data.format not in tuple(PackageFormat):
        raise ValidationError("Choose the package format: CSV, JSON Lines or Parquet.", "format")
    volume_size_mb = whole_number(
        data.volume_size_mb,
        "volume_size_mb",
        f"Enter the volume size in MB as a whole number from {VOLUME_SIZE_MB[0]} to {VOLUME_SIZE_MB[1]}.",
        *VOLUME_SIZE_MB,
    )
    retention_days = whole_number(
        data.retention_days,
        "retention_days",
        f"Enter how many days packages are kept, a whole number from {RETENTION_DAYS[0]} to {RETENTION_DAYS[1]}.",
        *RETENTION_DAYS,
    )
    cadence, cadence_time, weekday, day = _checked_cadence(data, zone)
    if data.status not in CHOOSABLE_STATUSES:
        raise ValidationError("Choose whether the cadence is active or paused.", "status")
    return CheckedSettings(
        datasets=datasets,
        format=data.format,
        volume_size_mb=volume_size_mb,
        retention_days=retention_days,
        cadence=cadence,
        cadence_time=cadence_time,
        cadence_weekday=weekday,
        cadence_day=day,
        notify_person_ids=_checked_people(data.notify_person_ids, member_ids),
        status=data.status,
    )


def _checked_datasets(names: list[str]) -> list[str]:
    chosen = {name.strip() if isinstance(name, str) else "" for name in names}
    available = active_datasets()
    unknown = sorted(chosen - set(available))
    if unknown:
        shown = unknown[0] if len(unknown[0]) <= 60 else unknown[0][:60] + "…"
        raise ValidationError(f"“{shown}” is not a dataset a package can include; choose from the list.", "datasets")
    if not chosen:
        raise ValidationError("Choose at least one dataset for the packages.", "datasets")
    return [name for name in available if name in chosen]


def _checked_cadence(data: SettingsInput, zone: str) -> tuple[str, str, int | None, int | None]:
    if data.cadence not in tuple(Cadence):
        raise ValidationError("Choose the cadence: off, daily, weekly or monthly.", "cadence")
    weekday = None
    day = None
    if data.cadence == Cadence.WEEKLY:
        weekday = whole_number(data.cadence_weekday, "cadence_weekday", "Choose the day of the week.", 0, 6)
    if data.cadence == Cadence.MONTHLY:
        day = whole_number(
            data.cadence_day,
            "cadence_day",
            "Choose the day of the month, a whole number from 1 to 28 (which every month has).",
            1,
            28,
        )
    at = (data.cadence_time or "").strip()
    timetable_fields: dict[str | None, str] = {
        "time": "cadence_time",
        "days": "cadence_weekday",
        "day": "cadence_day",
        "zone": "cadence",
    }
    try:
        timetable = cadence_timetable(
            data.cadence if data.cadence != Cadence.OFF else Cadence.DAILY, at, weekday, day, zone
        )
    except ValidationError as refused:
        raise ValidationError(str(refused), timetable_fields.get(refused.field, "cadence")) from None
    if timetable is None:
        raise ValueError("an off cadence is checked as a daily one, so it has a timetable")
    return data.cadence, timetable.time_of_day.strftime("%H:%M"), weekday, day


def _checked_people(values: list[str], member_ids: frozenset[int]) -> list[int]:
    chosen: list[int] = []
    for value in values:
        person_id = whole_number(value, "notify_person_ids", "Choose people to notify from the list.", 1, 2**31 - 1)
        if person_id not in member_ids:
            raise ValidationError(
                "Someone chosen to be notified is not a member of this workspace (any more); choose again.",
                "notify_person_ids",
            )
        if person_id not in chosen:
            chosen.append(person_id)
    if len(chosen) > MAX_NOTIFY_PEOPLE:
        raise ValidationError(f"Choose at most {MAX_NOTIFY_PEOPLE} people to notify.", "notify_person_ids")
    return chosen


def describe_cadence(cadence: str, at: str, weekday: int | None, day: int | None, zone: str) -> str:
    """ "Every Monday at 02:00 (Europe/London)", or "Off"."""
    if cadence == Cadence.DAILY:
        return f"Every day at {at} ({zone})"
    if cadence == Cadence.WEEKLY and weekday is not None:
        return f"Every {WEEKDAY_NAMES[weekday]} at {at} ({zone})"
    if cadence == Cadence.MONTHLY and day is not None:
        return f"On day {day} of every month at {at} ({zone})"
    return "Off: packages are made only with Export now"


# Destinations


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


def check_destination(
    data: DestinationInput, *, creating: bool, directory_root_configured: bool, role_access_available: bool = False
) -> CheckedDestination:
    """The destination as it will be stored; ValidationError names the first bad field.

    The secret is required when an S3 destination signing with a key is created, optional on an
    edit (empty keeps it); one by role has none. `role_access_available`: this installation has
    a principal for customers' roles to trust.
    """
    name = _checked_name(data.name)
    if data.kind not in tuple(DestinationKind):
        raise ValidationError(
            "Choose the kind of destination: an S3-compatible bucket, an SFTP server or a directory.", "kind"
        )
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
