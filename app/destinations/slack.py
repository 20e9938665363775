"""A Slack destination: an incoming webhook's URL (Slack's own secret: whoever has it can post to
the channel, so it is stored encrypted and never shown). The message says which file is ready,
its rows and size, with the download link and when the link expires (or that a workspace
package is ready, with a link to its page); never the rows.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from app.destinations.base import FileReady, PackageReady
from app.destinations.http_message import post_json
from app.domain.values.sizes import size_label

# What Slack's answers mean (its body says invalid_token, no_service, channel_is_archived, …).
_STATUS_SENTENCES = {
    400: "Slack refused the message as malformed.",
    403: "Slack refused the webhook: it was revoked, or its app was removed from the workspace.",
    404: "Slack does not know this webhook: it was removed, or the URL is mistyped.",
    410: "the channel was archived or deleted; choose another channel for a new webhook.",
}


def _rows(count: int) -> str:
    return "1 row" if count == 1 else f"{count:,} rows"


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _escaped(text: str) -> str:
    """Text as Slack's mrkdwn shows it literally (it reads &, < and > as markup)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def file_ready_message(ready: FileReady) -> dict:
    """The channel's message for a schedule's file."""
    text = (
        f"*{_escaped(ready.schedule_name)}*: the file {_escaped(ready.file_name)} is ready "
        f"({_rows(ready.rows)}, {size_label(ready.size_bytes)}). <{ready.download_url}|Download it> "
        f"(the link expires {_utc(ready.link_expires_at)})."
    )
    return {"text": text}


def package_ready_message(ready: PackageReady) -> dict:
    """The channel's message for a workspace package: its size and a link to its page."""
    volumes = "1 volume" if len(ready.volumes) == 1 else f"{len(ready.volumes)} volumes"
    text = (
        f"*{_escaped(ready.workspace_name)}*: a workspace export package is ready ({volumes}, "
        f"{_rows(ready.rows)}, {size_label(ready.size_bytes)}; the data as of {_utc(ready.cutoff_at)}). "
        f"<{ready.package_url}|Open the package> (kept until {_utc(ready.expires_at)})."
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
