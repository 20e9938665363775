"""The links that open a schedule's file with no sign-in: an email's download and unsubscribe
links, one pair per recipient delivery, and a webhook's download link, one per destination delivery.

A link carries a token signed with the app's secret that names the delivery's random
`link_nonce`, never its id: a token cannot be guessed or forged, and changing the nonce revokes
every link made from it. Each purpose signs with its own salt, so a token opens only what it was
made for. Whether the link still opens (file not expired, recipient still a member, INV-04;
destination still there and on) is decided where it is followed.
"""

from __future__ import annotations

from flask import current_app
from itsdangerous import BadSignature, URLSafeSerializer

_SALTS = {
    "download": "schedule-delivery-download",
    "unsubscribe": "schedule-delivery-unsubscribe",
    "destination_download": "schedule-destination-delivery-download",
}


def _serializer(purpose: str) -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt=_SALTS[purpose])


def link_token(link_nonce: str, purpose: str) -> str:
    """The signed token for `purpose` of the delivery with this nonce: "download" or "unsubscribe"
    of a recipient delivery, "destination_download" of a destination delivery."""
    return _serializer(purpose).dumps(link_nonce)


def download_path(link_nonce: str, purpose: str) -> str:
    """The path of a download link: `/d/<token>`, the public download route (app/blueprints/public_links)."""
    return f"/d/{link_token(link_nonce, purpose)}"


def nonce_from_token(token: str, purpose: str) -> str | None:
    """The delivery nonce a token names, or None for a forged, damaged or other-purpose token."""
    try:
        nonce = _serializer(purpose).loads(token)
    except BadSignature:
        return None
    return nonce if isinstance(nonce, str) else None


def public_link(path: str) -> str:
    """An absolute link for an email: PUBLIC_URL followed by the app's own path."""
    return current_app.config["SETTINGS"].public_url + path
