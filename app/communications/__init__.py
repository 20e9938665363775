"""Email: the one module that builds and sends messages (MAIL_URL: SMTP or an outbox folder).

    mailer = get_mailer()
    message_id = message_id_for("schedule-delivery", delivery.id, delivery.created_at, mailer.domain)
    submission_id = mailer.send(OutgoingMessage(to=Recipient(address, name), subject=…,
                                                message_id=message_id, heading=…, …))

`send` returns the submission id or raises `MailTemporarilyUnavailable` (try again later) or
`MailRefused` (do not). The Message-ID is fixed by the caller from its delivery row, so a
message sent again after a crash is recognisable as the same one (docs/architecture.md, "Email").
"""

from __future__ import annotations

from flask import current_app

from app.communications.backends import MailBackend, backend_for
from app.communications.errors import InvalidAddress, MailError, MailRefused, MailTemporarilyUnavailable
from app.communications.messages import (
    Attachment,
    Link,
    MessageText,
    OutgoingMessage,
    Recipient,
    build_message,
    message_id_for,
)
from app.communications.settings import MailSettings, parse_mail_settings

__all__ = [
    "Attachment",
    "InvalidAddress",
    "Link",
    "MailError",
    "MailRefused",
    "MailSettings",
    "MailTemporarilyUnavailable",
    "Mailer",
    "MessageText",
    "OutgoingMessage",
    "Recipient",
    "build_message",
    "get_mailer",
    "message_id_for",
    "parse_mail_settings",
]


class Mailer:
    """Builds each message with the configured sender and hands it to the configured backend."""

    def __init__(self, settings: MailSettings, backend: MailBackend | None = None) -> None:
        self.settings = settings
        self.backend = backend or backend_for(settings)

    @property
    def domain(self) -> str:
        return self.settings.domain

    def send(self, message: OutgoingMessage) -> str:
        """Submit one message; its submission id (the server's queue id, or the Message-ID)."""
        return self.backend.send(build_message(message, self.settings.sender))


def get_mailer() -> Mailer:
    """The mailer for the current app's settings, made once per app (it keeps no connection)."""
    mailer = current_app.extensions.get("rhythm_mailer")
    if mailer is None:
        mailer = current_app.extensions["rhythm_mailer"] = Mailer(current_app.config["SETTINGS"].mail)
    return mailer
