"""A webhook destination: an HTTPS URL of the customer's that receives a signed JSON message when a
schedule's file is ready (facts and a download link, never the rows).

Signing is Stripe's scheme, which receivers know: the header

    Rhythm-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the signing secret>

with the body's exact bytes. The signing secret is made by Rhythm (`new_signing_secret`), shown
to the administrator once and stored encrypted. A receiver recomputes the HMAC, compares it in
constant time and refuses a timestamp older than REPLAY_WINDOW_SECONDS (docs/schedules.md has a
ten-line check). `Rhythm-Message-Id` is the same on every retry of one message, so a receiver
can drop a repeat.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime

from app.destinations.base import FileReady, PackageReady
from app.destinations.http_message import post_json

SIGNATURE_HEADER = "Rhythm-Signature"
MESSAGE_ID_HEADER = "Rhythm-Message-Id"
# How old a signed timestamp a receiver should still accept; the docs' example uses it.
REPLAY_WINDOW_SECONDS = 300
SIGNING_SECRET_PREFIX = "whsec_"
FILE_READY = "file.ready"
PACKAGE_READY = "package.ready"
TEST = "test"
# What a receiver's statuses mean, for the administrator.
_STATUS_SENTENCES = {
    401: "it did not accept the signature: check the receiver uses this destination's current signing secret.",
    403: "it did not accept the signature: check the receiver uses this destination's current signing secret.",
    404: "nothing is there: check the URL's path.",
    410: "the receiver says it is gone for good: check the URL, or remove this destination.",
}


def new_signing_secret() -> str:
    """A new signing secret: 256 random bits, in characters any configuration file takes."""
    return SIGNING_SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The Rhythm-Signature header's value for `body` sent at `timestamp`."""
    digest = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def _utc_text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def file_ready_message(ready: FileReady) -> dict:
    """The message for a schedule's file: what the file is and where to download it, never its rows."""
    return {
        "id": ready.message_id,
        "type": FILE_READY,
        "schedule": {"name": ready.schedule_name, "slug": ready.schedule_slug},
        "run": {"id": ready.run_id, "occurrence": _utc_text(ready.occurrence)},
        "file": {
            "name": ready.file_name,
            "format": ready.format,
            "rows": ready.rows,
            "size_bytes": ready.size_bytes,
            "sha256": ready.sha256,
        },
        "download": {"url": ready.download_url, "expires_at": _utc_text(ready.link_expires_at)},
    }


def package_ready_message(ready: PackageReady) -> dict:
    """The message for a workspace package: its volumes' facts and a link to its page, never data."""
    return {
        "id": ready.message_id,
        "type": PACKAGE_READY,
        "workspace": {"name": ready.workspace_name},
        "package": {
            "id": ready.package_id,
            "cutoff": _utc_text(ready.cutoff_at),
            "format": ready.format,
            "rows": ready.rows,
            "size_bytes": ready.size_bytes,
            "url": ready.package_url,
            "expires_at": _utc_text(ready.expires_at),
        },
        "volumes": [
            {"name": volume.name, "rows": volume.rows, "size_bytes": volume.size_bytes, "sha256": volume.sha256}
            for volume in ready.volumes
        ],
    }


def test_message(message_id: str, now: datetime) -> dict:
    """Test connection's message: a receiver answers it like any other and may ignore it."""
    return {"id": message_id, "type": TEST, "sent_at": _utc_text(now)}


# Its name starts with "test": keep pytest from collecting it where a test module imports it.
test_message.__test__ = False  # type: ignore[attr-defined]


def encode(message: dict) -> bytes:
    """The body's exact bytes, which the signature covers."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def send(
    url: str,
    secret: str,
    message: dict,
    *,
    allowed_hosts: frozenset[str],
    clock: Callable[[], float] = time.time,
) -> int:
    """POST the signed message; its 2xx status, or DestinationRefused / DestinationUnavailable."""
    body = encode(message)
    headers = {
        SIGNATURE_HEADER: signature(secret, int(clock()), body),
        MESSAGE_ID_HEADER: str(message["id"]),
    }
    return post_json(
        url, body, headers, what="The webhook", allowed_hosts=allowed_hosts, status_sentences=_STATUS_SENTENCES
    )
