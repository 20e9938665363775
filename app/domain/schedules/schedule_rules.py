"""The rules a schedule's definition obeys wherever it comes from: the schedule form or a legacy import.

Pure functions over plain values: the caller looks up the workspace's people and the saver's
grants and passes them in, so the same rules give the same messages on both paths.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from app.domain.errors import ValidationError
from app.domain.values.email_address import check_address
from app.domain.values.text_rules import TextField
from app.models.export_file import FORMAT_LABELS, QUERY_FORMATS, FileFormat
from app.models.report import ReportKind
from app.models.schedule import MAX_RECIPIENTS, ScheduleKind

NAME = TextField("name", "the name", 200, missing="Give the schedule a name.")
CUSTOM_MESSAGE = TextField("custom_message", "the custom message", 5000, single_line=False)


@dataclass(frozen=True)
class RecipientChoice:
    """One recipient as stored: a person of the workspace or an email address, never both."""

    person_id: int | None = None
    email: str | None = None

    @property
    def address_key(self) -> str:
        """What makes recipients distinct: "person:<id>" or the address in lower case."""
        return f"person:{self.person_id}" if self.person_id is not None else str(self.email).lower()


# Why a schedule with outside addresses cannot run as each recipient: the form says it beside the choice.
RUN_AS_RECIPIENTS_PEOPLE_ONLY = (
    "Only people of this workspace have an access to make their file with; an outside address has none."
)


# Whose file the destinations of a schedule that runs as each recipient get, as the form and the page say it.
RUN_AS_RECIPIENTS_DESTINATIONS = (
    "Run as each recipient, the destinations still get the owner's file, made with the owner's access; "
    "each person's own file goes to that person only."
)


def refuse_addresses_when_run_as_recipients(addresses: list[str]) -> None:
    """Run as each recipient sends people only: every recipient must be a person of the workspace."""
    if addresses:
        raise ValidationError(
            f"{RUN_AS_RECIPIENTS_PEOPLE_ONLY} Remove {', '.join(addresses)}, or send everyone the owner's file.",
            "run_as_recipients",
        )


def allowed_formats(kind: str, report_kind: str | None = None) -> tuple[str, ...]:
    """Query schedules make CSV or XLSX; report schedules PDF, or XLSX for table and coded reports."""
    if kind == ScheduleKind.QUERY:
        return QUERY_FORMATS
    return (FileFormat.PDF,) if report_kind == ReportKind.SUMMARY else (FileFormat.PDF, FileFormat.XLSX)


def valid_format(value: object, kind: str, report_kind: str | None = None) -> str:
    allowed = allowed_formats(kind, report_kind)
    text = value.strip().lower() if isinstance(value, str) else ""
    if text not in allowed:
        choices = " or ".join(FORMAT_LABELS[fmt] for fmt in allowed)
        source = "a saved query" if kind == ScheduleKind.QUERY else f"a {report_kind} report"
        raise ValidationError(f"A schedule of {source} makes {choices} files.", "format")
    return text


def valid_address(value: object) -> str:
    """The address as typed, trimmed; ValidationError unless the mailer could send to it."""
    return check_address(value, "recipients").typed


def checked_recipients(
    entries: Sequence[int | str],
    *,
    member_ids: Collection[int],
    members_by_email: Mapping[str, int],
    may_add_external: bool,
    saver: str = "you",
) -> list[RecipientChoice]:
    """The recipients in order, each a person or an address, after every recipient rule.

    `entries` are person ids (picked from a list) or addresses (typed); an address that is a
    workspace person's (compared in lower case through `members_by_email`) becomes that person.
    Refused: no recipient, an id that is not a member, a malformed address, the same recipient
    twice (addresses compared without case), more than MAX_RECIPIENTS, and an outside address
    when the person saving may not add one (the external-recipients grant, INV-06); `saver` names
    that person in the message ("you", or "the owner …" for an import).
    """
    if not entries:
        raise ValidationError("Add at least one recipient.", "recipients")
    chosen: list[RecipientChoice] = []
    seen: set[str] = set()
    for entry in entries:
        if isinstance(entry, int) and not isinstance(entry, bool):
            if entry not in member_ids:
                raise ValidationError("A chosen recipient is not a person of this workspace.", "recipients")
            choice = RecipientChoice(person_id=entry)
            shown = "A person"
        else:
            address = valid_address(entry)
            person_id = members_by_email.get(address.lower())
            choice = RecipientChoice(person_id=person_id) if person_id is not None else RecipientChoice(email=address)
            shown = f"“{address}”"
        if choice.address_key in seen:
            raise ValidationError(
                f"{shown} is listed twice among the recipients (addresses are compared without regard to case).",
                "recipients",
            )
        seen.add(choice.address_key)
        chosen.append(choice)
    if len(chosen) > MAX_RECIPIENTS:
        raise ValidationError(
            f"A schedule has at most {MAX_RECIPIENTS} recipients; this one has {len(chosen)}.", "recipients"
        )
    outside = [choice.email for choice in chosen if choice.email is not None]
    if outside and not may_add_external:
        raise ValidationError(
            f"“{outside[0]}” is not a person of this workspace; sending to outside addresses needs {saver} "
            "to hold the external-recipients grant (schedules.external_recipients).",
            "recipients",
        )
    return chosen
