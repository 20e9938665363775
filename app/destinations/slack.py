"""A Slack destination: an incoming webhook's URL (Slack's own secret: whoever has it can post to
the channel, so it is stored encrypted and never shown). The message says which file is ready,
its rows and size, with the download link and when the link expires; never the rows.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from app.destinations.base import FileReady
from app.destinations.http_message import post_json
from app.domain.values.sizes import size_label

# What Slack's answers mean (its body says invalid_token, no_service, channel_is_archived, …).
_STATUS_SENTENCES = {
    400: "Slack refused the message as malformed.",
    403: "Slack refused the webhook: it was revoked, or its app was removed from the workspace.",
    404: "Slack does not know this webhook: it was removed, or the URL is mistyped.",
    410: "the channel was archived or deleted; choose another channel for a new webhook.",
}


def _escaped(text: str) -> str:
    """Text as Slack's mrkdwn shows it literally (it reads &, < and > as markup)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def file_ready_message(ready: FileReady) -> dict:
    """The channel's message for a schedule's file."""
    expires = ready.link_expires_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    rows = "1 row" if ready.rows == 1 else f"{ready.rows:,} rows"
    text = (
        f"*{_escaped(ready.schedule_name)}*: the file {_escaped(ready.file_name)} is ready "
        f"({rows}, {size_label(ready.size_bytes)}). <{ready.download_url}|Download it> (the link expires {expires})."
    )
    return {"text": text}


def test_message(now: datetime) -> dict:
    return {"text": f"Rhythm Exports: this channel's connection test ({now.astimezone(UTC):%Y-%m-%d %H:%M} UTC)."}


# Its name starts with "test": keep pytest from collecting it where a test module imports it.
test_message.__test__ = False  # type: ignore[attr-defined]


def send(url: str, message: dict, *, allowed_hosts: frozenset[str]) -> int:
    """POST the message to the incoming webhook; its 2xx status, or DestinationRefused / DestinationUnavailable."""
    body = json.dumps(message, ensure_ascii=False).encode("utf-8")
    return post_json(url, body, {}, what="Slack", allowed_hosts=allowed_hosts, status_sentences=_STATUS_SENTENCES)
