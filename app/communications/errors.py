"""What can go wrong when sending, split by what the caller should do next.

`MailTemporarilyUnavailable`: try again later (no connection, a timeout, a 4xx answer).
`MailRefused`: trying again will not help (a 5xx answer, an address that cannot be sent to).
Each carries a `summary` a person may read: bounded, one line, never a password.

Outside app/domain/errors.py's DomainError: the mail server's answers, not the person's doing; the
jobs that send record them on the message's row.
"""

from __future__ import annotations

SUMMARY_LIMIT = 300


class MailError(Exception):
    def __init__(self, summary: str) -> None:
        text = " ".join("".join(ch if ch.isprintable() else " " for ch in summary).split())
        self.summary = text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"
        super().__init__(self.summary)


class MailTemporarilyUnavailable(MailError):
    """The message was not accepted this time; the same message may be sent again later."""


class MailRefused(MailError):
    """The message was refused for good; sending it again would be refused again."""


class InvalidAddress(MailRefused):
    """The recipient's address cannot be written into a message."""
