"""Importing schedules from the old scheduling system (`flask schedules import-legacy FILE.json`).

The file's shape and each field's mapping are documented in docs/legacy-schedules.md. Each entry
is checked with the rules the schedule form applies (app/domain/schedules/schedule_rules.py, the
timetable's own validation, the owner's access as it is now) and imported in its own
transaction, so a bad entry is reported and the good ones still arrive. An imported schedule
starts paused (`legacy_import`) with the old id in `legacy_ref`; it resumes only when someone
confirms the old delivery has been switched off. The same old id is imported once per workspace
(a unique constraint makes that hold under concurrent imports too).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from flask import current_app
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.domain.errors import ValidationError
from app.domain.people.access import RequesterContext, current_context
from app.domain.schedules import schedule_rules, send_conditions
from app.domain.schedules.schedule_rules import (
    RecipientChoice,
    checked_recipients,
    valid_format,
)
from app.domain.sources.query_spec import validate_definition
from app.domain.timing.timetable import Timetable, TimetableKind, next_occurrence
from app.domain.values.text_rules import database_id, refuse_unstorable
from app.extensions import db
from app.models import Membership, Person, Report, SavedQuery, Workspace
from app.models.schedule import PauseReason, Schedule, ScheduleKind, ScheduleRecipient, ScheduleStatus
from app.models.types import utcnow
from app.services.accounts import audit
from app.vocabulary import Heading

MAX_LEGACY_REF_LENGTH = 200
ENTRY_FIELDS = frozenset(
    {
        "id",
        "workspace_id",
        "name",
        "owner_email",
        "source",
        "format",
        "timing",
        "recipients",
        "message",
        "send_when_empty",
        "header_row",
    }
)
REQUIRED_FIELDS = ("id", "name", "owner_email", "source", "format", "timing", "recipients")
SOURCE_FIELDS = frozenset({"type", "id"})
SOURCE_TYPES = {"saved_query": ScheduleKind.QUERY, "report": ScheduleKind.REPORT}
TIMING_FIELDS = frozenset({"frequency", "minute", "time", "weekdays", "day_of_month", "cron", "timezone"})
# The old system's frequencies and the timetable kinds they become.
FREQUENCIES = {
    "hourly": TimetableKind.HOURLY,
    "daily": TimetableKind.DAILY,
    "weekly": TimetableKind.WEEKLY,
    "monthly": TimetableKind.MONTHLY,
    "cron": TimetableKind.CRON,
}
LAST_DAY_OF_MONTH = -1
IMPORT_ACTION = "schedule.legacy_imported"


class LegacyFileError(ValidationError):
    """The file as a whole cannot be read as legacy schedules; nothing was imported."""


@dataclass(frozen=True)
class EntryOutcome:
    """What became of one entry: imported as a schedule, or refused with the reason."""

    index: int
    legacy_ref: str | None
    schedule_id: int | None = None
    schedule_name: str | None = None
    reason: str | None = None

    @property
    def imported(self) -> bool:
        return self.schedule_id is not None

    @property
    def label(self) -> str:
        """ "Entry 2 (old id “sch-17”)", for a line of the command's report."""
        return f"Entry {self.index}" + (f" (old id “{printable(self.legacy_ref)}”)" if self.legacy_ref else "")


def read_legacy_file(text: str) -> list:
    """The file's entries; LegacyFileError when it is not a JSON list."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LegacyFileError(
            f"The file is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})."
        ) from None
    except ValueError:
        raise LegacyFileError("The file holds a number too long to be an id or a setting.") from None
    except RecursionError:
        raise LegacyFileError("The file's JSON is nested too deeply to be a list of schedules.") from None
    if not isinstance(data, list):
        raise LegacyFileError("The file must hold a JSON list of schedules, one object per schedule.")
    return data


def import_legacy_schedules(
    entries: list, workspace_id: int | None = None, origin: str = "", now: datetime | None = None
) -> list[EntryOutcome]:
    """Import each entry in its own transaction; one outcome per entry, in the file's order.

    With `workspace_id` every entry goes to that workspace (an entry naming another one is
    refused); without it each entry names its workspace. LegacyFileError when `workspace_id`
    names no workspace.
    """
    if workspace_id is not None and db.session.get(Workspace, workspace_id) is None:
        raise LegacyFileError(f"Workspace {workspace_id} does not exist; nothing was imported.")
    moment = now or utcnow()
    return [_import_entry(index, entry, workspace_id, origin, moment) for index, entry in enumerate(entries, 1)]


def printable(value: str) -> str:
    """The value on one line: control and line-separating characters as U+FFFD."""
    return "".join("\ufffd" if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") else ch for ch in value)


def _id(value: object) -> int | None:
    """The id a field names (a whole number, or its digits as text); JSON true is not 1."""
    return None if isinstance(value, bool) else database_id(value)


def _legacy_ref(entry: object) -> str | None:
    if not isinstance(entry, dict):
        return None
    value = entry.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    return text or None


def record_import(schedule: Schedule, legacy_ref: str | None, entry: int, origin: str) -> None:
    """Audit an imported schedule (not committed): which entry of which file it came from."""
    audit.record(
        workspace_id=schedule.workspace_id,
        actor_id=None,
        action=IMPORT_ACTION,
        subject_type="schedule",
        subject_id=schedule.id,
        reason="Imported from the old scheduling system; paused until the old delivery is switched off.",
        details={"legacy_ref": legacy_ref, "entry": entry, "file": origin},
    )


def _import_entry(index: int, entry: object, workspace_id: int | None, origin: str, now: datetime) -> EntryOutcome:
    legacy_ref = _legacy_ref(entry)
    try:
        schedule = _schedule_from(entry, legacy_ref, workspace_id, now)
        db.session.add(schedule)
        db.session.flush()
        record_import(schedule, legacy_ref, index, origin)
        db.session.commit()
    except ValidationError as refused:
        db.session.rollback()
        return EntryOutcome(index, legacy_ref, reason=str(refused))
    except IntegrityError:
        # Another import (or a person) took the old id or the name between the checks and the commit.
        db.session.rollback()
        current_app.logger.warning(
            "legacy import: entry %s (old id %r) refused by the database", index, legacy_ref, exc_info=True
        )
        return EntryOutcome(index, legacy_ref, reason=_conflict(entry, legacy_ref, workspace_id))
    return EntryOutcome(index, legacy_ref, schedule_id=schedule.id, schedule_name=schedule.name)


def _schedule_from(entry: object, legacy_ref: str | None, workspace_id: int | None, now: datetime) -> Schedule:
    """The paused schedule an entry describes, after every rule; ValidationError with the first reason."""
    if not isinstance(entry, dict):
        raise ValidationError("An entry must be a JSON object.")
    _known_fields(entry, ENTRY_FIELDS, "the entry")
    missing = [field for field in REQUIRED_FIELDS if field not in entry]
    if missing:
        raise ValidationError(f"Missing field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}.")
    for field, value in entry.items():
        with _about(field):
            refuse_unstorable(value, field, "its value")
    if legacy_ref is None:
        raise ValidationError("“id” must be the old system's id of the schedule: a text or a whole number.")
    if len(legacy_ref) > MAX_LEGACY_REF_LENGTH:
        raise ValidationError(f"“id” is at most {MAX_LEGACY_REF_LENGTH} characters.")

    with _about("workspace_id"):
        workspace = _workspace(entry, workspace_id)
    already = db.session.execute(
        select(Schedule.id).where(Schedule.workspace_id == workspace.id, Schedule.legacy_ref == legacy_ref)
    ).scalar_one_or_none()
    if already is not None:
        raise ValidationError(f"“id”: Already imported as schedule {already}.")
    with _about("name"):
        name = schedule_rules.NAME.check(entry["name"])
        taken = db.session.execute(
            select(Schedule.id).where(Schedule.workspace_id == workspace.id, Schedule.name == name)
        ).scalar_one_or_none()
        if taken is not None:
            raise ValidationError(f"The workspace already has a schedule named “{name}” (schedule {taken}).")

    with _about("owner_email"):
        owner, access = _owner(entry["owner_email"], workspace)
    with _about("message"):
        custom_message = schedule_rules.CUSTOM_MESSAGE.check(entry.get("message"))
    schedule = Schedule(
        workspace_id=workspace.id,
        name=name,
        owner_id=owner.id,
        status=ScheduleStatus.PAUSED,
        pause_reason=PauseReason.LEGACY_IMPORT,
        paused_at=now,
        legacy_ref=legacy_ref,
        custom_message=custom_message,
        created_at=now,
        updated_at=now,
    )
    header_row = _flag(entry, "header_row", True)
    with _about("source"):
        _attach_source(schedule, entry["source"], entry["format"], workspace, access, header_row)
    schedule.send_condition = send_conditions.from_send_when_empty(
        schedule.kind, _flag(entry, "send_when_empty", default=False)
    )
    timetable = _timetable(entry["timing"], workspace.time_zone)
    schedule.timetable = timetable.to_json()
    schedule.next_occurrence_at = next_occurrence(timetable, now)
    schedule.recipients = [
        ScheduleRecipient(
            position=position, person_id=choice.person_id, email=choice.email, address_key=choice.address_key
        )
        for position, choice in enumerate(_recipients(entry["recipients"], workspace, access, owner.email))
    ]
    return schedule


@contextmanager
def _about(field: str) -> Iterator[None]:
    """Name the entry's field at the start of a refusal of its value ("“format”: …"), so whoever
    fixes the file knows where to look; a refusal that names its field already passes unchanged."""
    try:
        yield
    except ValidationError as refused:
        message = str(refused)
        if message.startswith("“"):
            raise
        raise ValidationError(f"“{field}”: {message}") from None


def _known_fields(data: dict, known: frozenset[str], where: str) -> None:
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        raise ValidationError(f"Unknown field{'s' if len(unknown) > 1 else ''} in {where}: {', '.join(unknown)}.")


def _flag(entry: dict, field: str, default: bool) -> bool:
    value = entry.get(field, default)
    if not isinstance(value, bool):
        raise ValidationError(f"“{field}” must be true or false.")
    return value


def _workspace(entry: dict, workspace_id: int | None) -> Workspace:
    named = entry.get("workspace_id")
    named_id = _id(named) if named is not None else None
    if named is not None and named_id is None:
        raise ValidationError("“workspace_id” must be a workspace's id (a whole number).")
    if workspace_id is not None and named_id is not None and named_id != workspace_id:
        raise ValidationError(f"The entry is for workspace {named_id}, not workspace {workspace_id} (--workspace).")
    chosen = workspace_id if workspace_id is not None else named_id
    if chosen is None:
        raise ValidationError("The entry names no workspace: give “workspace_id” or import with --workspace.")
    workspace = db.session.get(Workspace, chosen)
    if workspace is None:
        raise ValidationError(f"Workspace {chosen} does not exist.")
    if workspace.status != "live":
        raise ValidationError(f"Workspace {chosen} is {workspace.status}, not live.")
    return workspace


def _owner(value: object, workspace: Workspace) -> tuple[Person, RequesterContext]:
    email = value.strip() if isinstance(value, str) else ""
    if not email:
        raise ValidationError("“owner_email” must be the owner's email address.")
    person = db.session.execute(select(Person).where(func.lower(Person.email) == email.lower())).scalar_one_or_none()
    access = current_context(workspace.id, person.id) if person is not None else None
    if person is None or access is None:
        raise ValidationError(f"The owner {email} is not a member of workspace {workspace.id}.")
    return person, access


def _attach_source(
    schedule: Schedule,
    source: object,
    file_format: object,
    workspace: Workspace,
    access: RequesterContext,
    header_row: bool,
) -> None:
    if not isinstance(source, dict):
        raise ValidationError("“source” must be an object with a “type” (saved_query or report) and an “id”.")
    _known_fields(source, SOURCE_FIELDS, "“source”")
    # A JSON list or object as the type cannot be looked up (it is unhashable): it names no type.
    source_type = source.get("type")
    kind = SOURCE_TYPES.get(source_type) if isinstance(source_type, str) else None
    source_id = _id(source.get("id"))
    if kind is None or source_id is None:
        raise ValidationError("“source” must have a “type” (saved_query or report) and an “id” (a whole number).")
    schedule.kind = kind
    if kind == ScheduleKind.QUERY:
        query = db.session.get(SavedQuery, source_id)
        if query is None or query.workspace_id != workspace.id:
            raise ValidationError(f"Saved query {source_id} does not exist in workspace {workspace.id}.")
        _readable(access, query, f"saved query {source_id}")
        with _about("format"):
            schedule.format = valid_format(file_format, ScheduleKind.QUERY)
        settings = current_app.config["SETTINGS"]
        try:
            definition = validate_definition(query.definition(), settings.max_export_rows)
        except ValidationError as exc:
            raise ValidationError(f"Saved query {source_id} cannot be run as it is: {exc}") from None
        schedule.source_query_id = query.id
        schedule.query_definition = definition
        schedule.query_version = query.version
        schedule.heading = Heading.NAMES if header_row else Heading.NONE
        return
    report = db.session.get(Report, source_id)
    if report is None or report.workspace_id != workspace.id:
        raise ValidationError(f"Report {source_id} does not exist in workspace {workspace.id}.")
    query = db.session.get_one(SavedQuery, report.source_query_id)
    _readable(access, query, f"report {source_id}")
    with _about("format"):
        schedule.format = valid_format(file_format, ScheduleKind.REPORT, report.kind)
    schedule.report_id = report.id
    schedule.report_version_seen = report.version
    # Report files print column labels, as a report's own file requests do.
    schedule.heading = Heading.LABELS


def _readable(access: RequesterContext, query: SavedQuery, what: str) -> None:
    if not access.can_read_dataset(query.dataset):
        owner = db.session.get_one(Person, access.person_id)
        raise ValidationError(
            f"The owner {owner.email} has no access to the “{query.dataset}” dataset that {what} reads."
        )


def _timetable(timing: object, default_zone: str) -> Timetable:
    if not isinstance(timing, dict):
        raise ValidationError("“timing” must be an object with a “frequency”.")
    _known_fields(timing, TIMING_FIELDS, "“timing”")
    frequency = timing.get("frequency")
    kind = FREQUENCIES.get(frequency.strip().lower()) if isinstance(frequency, str) else None
    if kind is None:
        raise ValidationError("“timing.frequency” must be hourly, daily, weekly, monthly or cron.")
    data: dict[str, object] = {"kind": kind, "zone": timing.get("timezone")}
    if kind == TimetableKind.HOURLY:
        data["minute"] = timing.get("minute")
    elif kind == TimetableKind.CRON:
        data["expression"] = timing.get("cron")
    else:
        data["time"] = timing.get("time")
    if kind == TimetableKind.WEEKLY:
        days = timing.get("weekdays")
        data["days"] = (
            [day.lower() for day in days]
            if isinstance(days, list) and all(isinstance(day, str) for day in days)
            else None
        )
    if kind == TimetableKind.MONTHLY:
        day = timing.get("day_of_month")
        data["day"] = "last" if day == LAST_DAY_OF_MONTH else day
    try:
        return Timetable.from_json(data, default_zone)
    except ValidationError as exc:
        raise ValidationError(f"“timing”: {exc}") from None


def _recipients(
    value: object, workspace: Workspace, access: RequesterContext, owner_email: str
) -> list[RecipientChoice]:
    if not isinstance(value, list) or not all(isinstance(address, str) for address in value):
        raise ValidationError("“recipients” must be a list of email addresses.")
    members = db.session.execute(
        select(Person.id, Person.email)
        .join(Membership, Membership.person_id == Person.id)
        .where(Membership.workspace_id == workspace.id)
    ).all()
    try:
        return checked_recipients(
            value,
            member_ids={person_id for person_id, _email in members},
            members_by_email={email.lower(): person_id for person_id, email in members},
            may_add_external=access.has_grant("schedules.external_recipients"),
            saver=f"the owner {owner_email}",
        )
    except ValidationError as exc:
        raise ValidationError(f"“recipients”: {exc}") from None


def _conflict(entry: object, legacy_ref: str | None, workspace_id: int | None) -> str:
    """Why the insert lost a race: the old id or the name was taken meanwhile."""
    named = entry.get("workspace_id") if isinstance(entry, dict) else None
    chosen = workspace_id if workspace_id is not None else _id(named)
    existing = db.session.execute(
        select(Schedule.id).where(Schedule.workspace_id == chosen, Schedule.legacy_ref == legacy_ref)
    ).scalar_one_or_none()
    if existing is not None:
        return f"“id”: Already imported as schedule {existing}."
    return (
        "The database refused the entry because something changed meanwhile (another schedule took its "
        "name, or its owner or source went); run the import again to see the reason."
    )
