"""Messages: what the caller says (`OutgoingMessage`) and the email that says it.

Every message goes to one recipient, so no recipient learns another's address and each
message maps to one delivery row with its own fixed Message-ID. The plain-text and HTML parts
come from the Jinja templates beside this module; the HTML one escapes every value.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from app.communications.errors import InvalidAddress
from app.domain.errors import ValidationError
from app.domain.values.email_address import check_address

_TEMPLATES = Path(__file__).with_name("templates")
_html = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=True, undefined=StrictUndefined)
_text = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=False, undefined=StrictUndefined)

_KIND = re.compile(r"^[a-z][a-z0-9-]{0,39}$")
_DOMAIN = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
_MESSAGE_ID = re.compile(r"^<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+>$")


def message_id_for(kind: str, row_id: int, created_at: datetime, domain: str) -> str:
    """The Message-ID of the message a row sends: the same for every attempt at that row.

    `kind` names the row's table (`schedule-delivery`, `package-notice`, …), so rows of two
    tables never share an id; `domain` is the sender's domain. The row's creation time keeps
    the id unique when a database starts again from id 1 (a demo reset) but the outbox folder
    or the receiving server still holds the earlier messages: otherwise the new message would
    be taken for a repeat and never written.
    """
    if not _KIND.match(kind):
        raise ValueError(f"message kind {kind!r} must be lower-case letters, digits and dashes")
    if isinstance(row_id, bool) or not isinstance(row_id, int) or row_id < 1:
        raise ValueError(f"row id {row_id!r} must be a positive integer")
    if not _DOMAIN.match(domain):
        raise ValueError(f"{domain!r} is not a domain name")
    created = created_at.astimezone(UTC) if created_at.tzinfo else created_at
    return f"<{kind}.{row_id}.{created:%Y%m%d%H%M%S%f}@{domain.lower()}>"


@dataclass(frozen=True)
class Recipient:
    address: str
    name: str = ""


@dataclass(frozen=True)
class Link:
    label: str
    url: str

    def __post_init__(self) -> None:
        _check_url(self.url, "link")


@dataclass(frozen=True)
class Attachment:
    """A file carried in the message: its bytes exactly as stored, its name and MIME type."""

    file_name: str
    content_type: str
    data: bytes

    def __post_init__(self) -> None:
        if self.content_type.count("/") != 1:
            raise ValueError(f"content type {self.content_type!r} is not of the form type/subtype")


@dataclass(frozen=True)
class MessageText:
    """What a message that goes to many people says to each of them alike."""

    subject: str
    heading: str
    paragraphs: tuple[str, ...]
    facts: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class OutgoingMessage:
    """One email to one person.

    `paragraphs` may hold line breaks; every other text is one line (line breaks and other control
    characters become spaces). `facts` are (label, value) pairs shown as a table; `attachments`
    follow the text and HTML parts. With an
    `unsubscribe_url` the message carries a visible unsubscribe link and the RFC 8058 headers;
    that URL must accept a POST of `List-Unsubscribe=One-Click` without a session.
    """

    to: Recipient
    subject: str
    message_id: str
    heading: str
    paragraphs: Sequence[str] = ()
    facts: Sequence[tuple[str, str]] = ()
    link: Link | None = None
    footer: str = ""
    unsubscribe_url: str | None = None
    attachments: Sequence[Attachment] = ()

    def __post_init__(self) -> None:
        if not _MESSAGE_ID.match(self.message_id):
            raise ValueError(f"Message-ID {self.message_id!r} is not of the form <local@domain>")
        if self.unsubscribe_url is not None:
            _check_url(self.unsubscribe_url, "unsubscribe")


def _check_url(url: str, what: str) -> None:
    parts = urlsplit(url)
    if (
        parts.scheme not in ("https", "http")
        or not parts.netloc
        or any(ch in url for ch in " <>\"'\\")
        or not url.isprintable()
    ):
        raise ValueError(f"the {what} URL must be an absolute http(s) URL without spaces or control characters")


def one_line(value: str) -> str:
    """The value with every control or line-separating character as a space."""
    return "".join(" " if _breaks_line(ch) else ch for ch in value)


def _breaks_line(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp")


def _lines(value: str) -> list[str]:
    """A paragraph's lines: split at any line break, other control characters as spaces."""
    return [one_line(line) for line in value.splitlines()] or [""]


def _recipient_address(recipient: Recipient) -> Address:
    """The recipient as a header value, by the product's one address rule (the one the schedule
    form and the legacy import apply): the domain in its IDNA ASCII form, so the header is ASCII
    and no server on the way needs SMTPUTF8."""
    try:
        address = check_address(recipient.address)
    except ValidationError as exc:
        raise InvalidAddress(str(exc)) from None
    try:
        return Address(display_name=" ".join(one_line(recipient.name).split()), addr_spec=address.ascii)
    except (HeaderParseError, ValueError, IndexError) as exc:
        raise InvalidAddress(f"“{one_line(recipient.address)[:80]}” is not an email address.") from exc


def _subject(subject: str) -> str:
    return " ".join(one_line(subject).split())


def render_parts(message: OutgoingMessage) -> tuple[str, str]:
    """The plain-text and HTML bodies of a message."""
    context = {
        "heading": one_line(message.heading),
        "paragraphs": [_lines(paragraph) for paragraph in message.paragraphs],
        "facts": [(one_line(label), one_line(value)) for label, value in message.facts],
        "link": message.link and Link(one_line(message.link.label), message.link.url),
        "footer": one_line(message.footer),
        "unsubscribe_url": message.unsubscribe_url,
        "subject": _subject(message.subject),
    }
    return _text.get_template("message.txt").render(context), _html.get_template("message.html").render(context)


def build_message(message: OutgoingMessage, sender: Address, now: datetime | None = None) -> EmailMessage:
    """The email for a message, ready to send: headers, a plain-text part and an HTML part, then
    any attachments (base64-encoded)."""
    email = EmailMessage()
    email["From"] = sender
    email["To"] = _recipient_address(message.to)
    # A subject is one line: a line break in it could otherwise start a header of its own.
    email["Subject"] = _subject(message.subject)
    email["Date"] = format_datetime(now or datetime.now(UTC))
    email["Message-ID"] = message.message_id
    # RFC 3834: automatic replies (vacation notices) are not sent back to this address.
    email["Auto-Submitted"] = "auto-generated"
    if message.unsubscribe_url:
        email["List-Unsubscribe"] = f"<{message.unsubscribe_url}>"
        email["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    text, html = render_parts(message)
    email.set_content(text, charset="utf-8")
    email.add_alternative(html, subtype="html", charset="utf-8")
    for attachment in message.attachments:
        maintype, subtype = attachment.content_type.split(";")[0].strip().split("/")
        email.add_attachment(
            attachment.data, maintype=maintype, subtype=subtype, filename=one_line(attachment.file_name)
        )
    return email
