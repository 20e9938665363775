"""Backends: where a built message goes. The only place in the product that talks SMTP.

`send(email) -> submission id`: the server's queue id when its final answer names one
(`250 2.0.0 Ok: queued as 4XyZ`), otherwise the message's Message-ID.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import smtplib
import ssl
import tempfile
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path
from typing import Protocol

from app.communications.errors import MailRefused, MailTemporarilyUnavailable
from app.communications.settings import MailSettings, Security

log = logging.getLogger(__name__)

# CRLF line ends as SMTP wants, but headers folded only past RFC 5322's 998 characters: the
# default 78 would turn a long `List-Unsubscribe: <url>` into encoded words that mail clients
# do not read as a link. Body lines stay short: their transfer encoding wraps them.
SMTP_POLICY = SMTP.clone(max_line_length=998)

_QUEUED_AS = re.compile(r"\bqueued as\s+<?([A-Za-z0-9._:@=+/-]{1,100})>?", re.IGNORECASE)
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._@+=-]")


class MailBackend(Protocol):
    def send(self, email: EmailMessage) -> str: ...


def _envelope(email: EmailMessage) -> tuple[str, str]:
    return email["From"].addresses[0].addr_spec, email["To"].addresses[0].addr_spec


class OutboxBackend:
    """Writes each message to `<folder>/<Message-ID>.eml`: the embedded default, and a record to read.

    The file appears whole or not at all (written under a temporary name, then linked into
    place), and a Message-ID already in the folder is not written again.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def send(self, email: EmailMessage) -> str:
        message_id = email["Message-ID"]
        target = self.folder / outbox_file_name(message_id)
        try:
            written = self._write_once(email.as_bytes(policy=SMTP_POLICY), target)
        except OSError as exc:
            raise MailTemporarilyUnavailable(f"the outbox folder could not be written ({exc.strerror or exc})") from exc
        if written:
            log.info("mail %s written to %s", message_id, target)
        else:
            log.info("mail %s is already in the outbox as %s; not written again", message_id, target)
        return message_id

    def _write_once(self, payload: bytes, target: Path) -> bool:
        """Write the file unless it exists; whether this call wrote it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        # A crash can leave this temporary behind; its name never ends in `.eml`.
        descriptor, temporary = tempfile.mkstemp(dir=self.folder, prefix=".sending-", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                # A link fails when the name exists, so the first file for a Message-ID stays.
                os.link(temporary, target)
            except FileExistsError:
                return False
        finally:
            os.unlink(temporary)
        folder = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        return True


def outbox_file_name(message_id: str) -> str:
    """The file a Message-ID is written to: its own characters where safe, plus a digest when not."""
    inner = message_id.strip().removeprefix("<").removesuffix(">")
    safe = _SAFE_NAME.sub("_", inner)[:150]
    if safe != inner:
        safe += "-" + hashlib.sha256(inner.encode()).hexdigest()[:16]
    return f"{safe}.eml"


class SmtpBackend:
    """Submits each message over its own SMTP connection (plain, STARTTLS or TLS, with a login)."""

    def __init__(self, settings: MailSettings) -> None:
        assert settings.host is not None and settings.port is not None
        self.settings = settings
        self._host: str = settings.host
        self._port: int = settings.port

    def __repr__(self) -> str:
        return f"SmtpBackend({self.settings.security.value}://{self.settings.server})"

    def send(self, email: EmailMessage) -> str:
        sender, recipient = _envelope(email)
        message_id = email["Message-ID"]
        reply = self._deliver(sender, recipient, email.as_bytes(policy=SMTP_POLICY))
        match = _QUEUED_AS.search(reply)
        submission_id = match.group(1) if match else message_id
        log.info("mail %s submitted to %s as %s", message_id, self.settings.server, submission_id)
        return submission_id

    def _deliver(self, sender: str, recipient: str, payload: bytes) -> str:
        """The server's final answer to the message; a classified error when it took none."""
        server = f"the mail server {self.settings.server}"
        try:
            smtp = self._connect()
        except smtplib.SMTPResponseException as exc:
            raise classify_reply(exc.smtp_code, exc.smtp_error, server) from exc
        except OSError as exc:
            raise _unreachable(exc, server, "could not be reached") from exc
        try:
            return self._submit(smtp, sender, recipient, payload, server)
        except smtplib.SMTPResponseException as exc:
            raise classify_reply(exc.smtp_code, exc.smtp_error, server) from exc
        except smtplib.SMTPServerDisconnected as exc:
            raise _unreachable(exc, server, "closed the connection") from exc
        except smtplib.SMTPException as exc:
            # smtplib's own words (no STARTTLS, no shared login method): the settings must change.
            raise MailRefused(f"{server}: {exc}") from exc
        except OSError as exc:
            raise _unreachable(exc, server, "dropped the connection") from exc
        finally:
            _close_quietly(smtp)

    def _connect(self) -> smtplib.SMTP:
        settings = self.settings
        if settings.security is Security.TLS:
            return smtplib.SMTP_SSL(
                self._host, self._port, timeout=settings.timeout_seconds, context=ssl.create_default_context()
            )
        return smtplib.SMTP(self._host, self._port, timeout=settings.timeout_seconds)

    def _submit(self, smtp: smtplib.SMTP, sender: str, recipient: str, payload: bytes, server: str) -> str:
        """MAIL, RCPT, DATA step by step, since `sendmail` drops the final answer with the queue id."""
        settings = self.settings
        smtp.ehlo()
        if settings.security is Security.STARTTLS:
            smtp.starttls(context=ssl.create_default_context())
            smtp.ehlo()
        if settings.username:
            smtp.login(settings.username, settings.password or "")
        code, text = smtp.mail(sender)
        if code != 250:
            raise classify_reply(code, text, f"{server} (sender {sender})")
        code, text = smtp.rcpt(recipient)
        if code not in (250, 251):
            raise classify_reply(code, text, f"{server} (recipient {recipient})")
        code, text = smtp.data(payload)
        if code != 250:
            raise classify_reply(code, text, server)
        return text.decode("utf-8", "replace")


def _unreachable(exc: OSError, server: str, what: str) -> MailTemporarilyUnavailable:
    """A network failure as a temporary error. smtplib reports a read timeout as a disconnection
    whose context is the timeout, so the context is looked at too."""
    if isinstance(exc, TimeoutError) or isinstance(exc.__context__, TimeoutError):
        return MailTemporarilyUnavailable(f"{server} did not answer in time")
    if isinstance(exc, ssl.SSLError):
        return MailTemporarilyUnavailable(f"TLS with {server} failed: {exc.reason or exc}")
    return MailTemporarilyUnavailable(f"{server} {what} ({exc.strerror or exc})")


def _close_quietly(smtp: smtplib.SMTP) -> None:
    """QUIT, or just close: once the server took the message, nothing after it may fail the send."""
    try:
        smtp.quit()
    except (smtplib.SMTPException, OSError):
        smtp.close()


def classify_reply(code: int, text: bytes | str, where: str) -> MailTemporarilyUnavailable | MailRefused:
    """An SMTP answer as an error: 4xx (and no answer) may pass later, 5xx will not."""
    reply = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    summary = f"{where} answered {code} {reply}"
    if 500 <= code < 600:
        return MailRefused(summary)
    return MailTemporarilyUnavailable(summary)


def backend_for(settings: MailSettings) -> MailBackend:
    if settings.outbox is not None:
        return OutboxBackend(settings.outbox)
    return SmtpBackend(settings)
