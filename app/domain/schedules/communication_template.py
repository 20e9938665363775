"""A message template's versions (DESIGN §7): `draft → published`, and a published version never changes.

Each change is one UPDATE whose WHERE clause requires the version to be a draft, so a version
published meanwhile (by another person, in another tab) is never edited or published twice.
A refused change raises TransitionRefused. Not committed: the service commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.domain import transitions
from app.domain.errors import ValidationError
from app.domain.values.text_rules import refuse_line_breaks, refuse_unstorable
from app.models.schedule import CommunicationTemplateVersion, TemplateStatus

MAX_NAME = 200
MAX_SUBJECT = 200
MAX_BODY = 20_000


@dataclass(frozen=True)
class TemplateText:
    subject: str
    body: str


def validate_name(name: str) -> str:
    refuse_unstorable(name, "name", "the name")
    refuse_line_breaks(name, "name", "the name")
    name = name.strip()
    if not name:
        raise ValidationError("Give the template a name.", "name")
    if len(name) > MAX_NAME:
        raise ValidationError(f"The name can be at most {MAX_NAME} characters long.", "name")
    return name


def validate_text(subject: str, body: str) -> TemplateText:
    """The subject and body as they will be stored; ValidationError naming the field otherwise.

    The subject becomes an email header, so it is one line.
    """
    refuse_unstorable(subject, "subject", "the subject")
    refuse_unstorable(body, "body", "the message")
    subject = subject.strip()
    if not subject:
        raise ValidationError("Give the message a subject.", "subject")
    refuse_line_breaks(subject, "subject", "the subject")
    if len(subject) > MAX_SUBJECT:
        raise ValidationError(f"The subject can be at most {MAX_SUBJECT} characters long.", "subject")
    body = body.replace("\r\n", "\n").strip()
    if not body:
        raise ValidationError("Write the message.", "body")
    if len(body) > MAX_BODY:
        raise ValidationError(f"The message can be at most {MAX_BODY:,} characters long.", "body")
    return TemplateText(subject, body)


def _apply_to_draft(version_id: int, values: dict, action: str) -> None:
    version = CommunicationTemplateVersion
    transitions.apply(
        version,
        [version.id == version_id, version.status == TemplateStatus.DRAFT],
        values,
        f"template version {version_id} cannot {action}: it is no longer a draft",
    )


def edit_draft(version_id: int, text: TemplateText) -> None:
    """A draft's subject and body changed in place."""
    _apply_to_draft(version_id, {"subject": text.subject, "body": text.body}, "be edited")


def publish(version_id: int, now: datetime) -> None:
    """draft → published, for good."""
    _apply_to_draft(version_id, {"status": TemplateStatus.PUBLISHED, "published_at": now}, "be published")
