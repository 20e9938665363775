"""The schedule form's use cases: the form's values of a schedule, and saving one (create or edit)
with every field checked, each refusal on its field, and the audit event in the transaction.
Who may see and manage which schedule is app/services/schedules/schedules.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from app.domain.errors import ChangedMeanwhile, FieldChecks, ValidationError
from app.domain.people.access import RequesterContext
from app.domain.schedules import schedule_rules, send_conditions
from app.domain.schedules.attachment_rules import NOT_ALLOWED
from app.domain.schedules.schedule_rules import allowed_formats
from app.domain.timing.timetable import Timetable, next_occurrence
from app.domain.values.email_address import addresses_one_a_line
from app.domain.values.text_rules import database_id, refuse_unstorable
from app.extensions import db, execute_dml
from app.models import Membership, Person, Report, SavedQuery
from app.models.export_destination import MAX_DESTINATIONS
from app.models.export_file import FORMAT_LABELS
from app.models.schedule import (
    MAX_RECIPIENTS,
    Schedule,
    ScheduleDestination,
    ScheduleKind,
    ScheduleRecipient,
    ScheduleStatus,
)
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.destinations import registry
from app.services.files.file_requests import HEADINGS
from app.services.schedules import attachment_policy
from app.services.schedules.schedules import (
    EXTERNAL_GRANT,
    Recipient,
    ScheduleInput,
    published_template_versions,
    workspace_zone,
)
from app.services.sources import reports, saved_queries
from app.vocabulary import Heading


def input_of(schedule: Schedule) -> ScheduleInput:
    """The form's values for a saved schedule."""
    source = (
        f"{ScheduleKind.QUERY}:{schedule.source_query_id}"
        if schedule.kind == ScheduleKind.QUERY
        else f"{ScheduleKind.REPORT}:{schedule.report_id or ''}"
    )
    return ScheduleInput(
        name=schedule.name,
        source=source,
        format=schedule.format,
        heading=schedule.heading,
        timetable=dict(schedule.timetable),
        people=[str(r.person_id) for r in schedule.recipients if r.person_id is not None],
        addresses="\n".join(r.email for r in schedule.recipients if r.email is not None),
        template_version_id="" if schedule.template_version_id is None else str(schedule.template_version_id),
        custom_message=schedule.custom_message,
        send_condition=schedule.send_condition,
        alert_with_file=schedule.alert_with_file,
        run_as_recipients=schedule.run_as_recipients,
        attach_file=schedule.attach_file,
        destinations=[str(chosen.destination_id) for chosen in schedule.destinations],
    )


def save_schedule(
    access: RequesterContext, schedule: Schedule | None, data: ScheduleInput, expected_version: int | None = None
) -> Schedule:
    """Create (`schedule` None) or change a schedule; nothing is written when a field is refused, and
    ValidationErrors then names every refused field at once. A change to a schedule someone saved
    after `expected_version` was opened writes nothing and raises ChangedMeanwhile."""
    refuse_unstorable(
        [
            data.name,
            data.source,
            data.format,
            data.heading,
            data.timetable,
            data.people,
            data.addresses,
            data.template_version_id,
            data.custom_message,
            data.destinations,
        ],
        "form",
        "the form",
    )
    checked = _checked(access, data, schedule)
    name, kind, source, timetable = checked.name, checked.kind, checked.source, checked.timetable
    now = utcnow()
    values = {
        "name": name,
        "format": checked.format,
        "heading": checked.heading,
        "timetable": timetable.to_json(),
        "template_version_id": checked.template_version_id,
        "custom_message": checked.message,
        "send_condition": checked.send_condition,
        "alert_with_file": bool(data.alert_with_file),
        "run_as_recipients": bool(data.run_as_recipients),
        "attach_file": bool(data.attach_file),
        "updated_at": now,
    }
    values.update(_source_values(schedule, source))
    if schedule is None or schedule.timetable != values["timetable"]:
        values["next_occurrence_at"] = next_occurrence(timetable, now)
    try:
        if schedule is None:
            schedule = Schedule(
                workspace_id=access.workspace_id,
                owner_id=access.person_id,
                kind=kind,
                version=1,
                status=ScheduleStatus.ACTIVE,
                created_at=now,
                **values,
            )
            db.session.add(schedule)
            db.session.flush()
            action = "schedule.created"
        else:
            version = schedule.version if expected_version is None else expected_version
            result = execute_dml(
                update(Schedule)
                .where(
                    Schedule.id == schedule.id,
                    Schedule.workspace_id == access.workspace_id,
                    Schedule.version == version,
                )
                .values(kind=kind, version=Schedule.version + 1, **values)
                .execution_options(synchronize_session=False)
            )
            if result.rowcount != 1:
                db.session.rollback()
                raise ChangedMeanwhile("schedule")
            action = "schedule.changed"
        _replace_recipients(schedule.id, checked.recipients)
        _replace_destinations(schedule.id, checked.destination_ids)
        audit.record(
            workspace_id=access.workspace_id,
            actor_id=access.person_id,
            action=action,
            subject_type="schedule",
            subject_id=schedule.id,
        )
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        _refuse_taken_name(access.workspace_id, name, None if schedule is None else schedule.id)
        raise ValidationError("The chosen source or template was removed meanwhile. Choose again.", "source") from None
    db.session.refresh(schedule)
    return schedule


@dataclass(frozen=True)
class _CheckedSchedule:
    name: str
    kind: str
    source: SavedQuery | Report
    format: str
    heading: str
    timetable: Timetable
    recipients: list[Recipient]
    template_version_id: int | None
    message: str
    destination_ids: list[int]
    send_condition: str


def _checked(access: RequesterContext, data: ScheduleInput, schedule: Schedule | None) -> _CheckedSchedule:
    """Every field of the form checked; ValidationErrors holds every refusal at once, each on its field."""
    existing_id = None if schedule is None else schedule.id
    chosen_before = [] if schedule is None else [chosen.destination_id for chosen in schedule.destinations]
    checks = FieldChecks()
    name = checks.check(schedule_rules.NAME.check, data.name)
    if name is not None:
        checks.check(_refuse_taken_name, access.workspace_id, name, existing_id)
    found = checks.check(_checked_source, access, data.source)
    fmt = heading = None
    if found is not None:
        fmt = checks.check(_checked_format, *found, data.format)
        heading = checks.check(_checked_heading, found[0], data.heading)
    timetable = checks.check(Timetable.from_json, data.timetable, workspace_zone(access.workspace_id))
    destination_ids = checks.check(checked_destinations, access, data.destinations, chosen_before)
    recipients = checks.check(checked_recipients, access, data.people, data.addresses, bool(destination_ids))
    template_version_id = checks.check(_checked_template_version, access.workspace_id, data.template_version_id)
    message = checks.check(schedule_rules.CUSTOM_MESSAGE.check, data.custom_message)
    send_condition = checks.check(send_conditions.checked, data.send_condition)
    if data.attach_file:
        checks.check(_refuse_attachment_unless_allowed, access.workspace_id)
    if data.run_as_recipients and recipients is not None:
        checks.check(schedule_rules.refuse_addresses_when_run_as_recipients, [r.email for r in recipients if r.email])
    checks.raise_any()
    # Past raise_any every check passed, so each value is there.
    return _CheckedSchedule(
        name=cast(str, name),
        kind=cast(tuple, found)[0],
        source=cast(tuple, found)[1],
        format=cast(str, fmt),
        heading=cast(str, heading),
        timetable=cast(Timetable, timetable),
        recipients=cast(list, recipients),
        template_version_id=template_version_id,
        message=cast(str, message),
        destination_ids=cast(list, destination_ids),
        send_condition=cast(str, send_condition),
    )


def _refuse_attachment_unless_allowed(workspace_id: int) -> None:
    if attachment_policy.limit_mb(workspace_id) is None:
        raise ValidationError(NOT_ALLOWED, "attach_file")


def _refuse_taken_name(workspace_id: int, name: str, excluding_id: int | None) -> None:
    clash = select(Schedule.id).where(Schedule.workspace_id == workspace_id, func.lower(Schedule.name) == name.lower())
    if excluding_id is not None:
        clash = clash.where(Schedule.id != excluding_id)
    if db.session.execute(clash.limit(1)).first() is not None:
        raise ValidationError("Another schedule in this workspace already has that name.", "name")


def _checked_source(access: RequesterContext, text: str) -> tuple[str, SavedQuery | Report]:
    """The query or report the form names, if the person may read it."""
    kind, _, raw_id = (text or "").partition(":")
    source_id = database_id(raw_id)
    found: SavedQuery | Report | None = None
    if kind == ScheduleKind.QUERY and source_id is not None:
        query_listing = saved_queries.get_query(access, source_id)
        found = query_listing.query if query_listing else None
    elif kind == ScheduleKind.REPORT and source_id is not None:
        report_listing = reports.get_report(access, source_id)
        found = report_listing.report if report_listing else None
    if found is None:
        raise ValidationError("Choose the saved query or report the schedule sends.", "source")
    return kind, found


def _checked_format(kind: str, source: SavedQuery | Report, text: str) -> str:
    allowed = allowed_formats(kind, source.kind if isinstance(source, Report) else None)
    if text not in allowed:
        spoken = " or ".join(FORMAT_LABELS[fmt] for fmt in allowed)
        raise ValidationError(f"Choose the file format: this {kind} can be sent as {spoken}.", "format")
    return text


def _checked_heading(kind: str, text: str) -> str:
    """A query file's heading row; a report prints its own headings, so it keeps the default."""
    if kind != ScheduleKind.QUERY:
        return Heading.NAMES
    if text not in HEADINGS:
        raise ValidationError("Choose the heading row: column names, column labels or none.", "heading")
    return text


def _source_values(schedule: Schedule | None, source: SavedQuery | Report) -> dict:
    """The source columns; a query schedule keeps its snapshot while it names the same query (INV-07)."""
    if isinstance(source, SavedQuery):
        if schedule is not None and schedule.kind == ScheduleKind.QUERY and schedule.source_query_id == source.id:
            return {}
        return {
            "source_query_id": source.id,
            "query_definition": source.definition(),
            "query_version": source.version,
            "report_id": None,
            "report_version_seen": None,
        }
    if schedule is not None and schedule.kind == ScheduleKind.REPORT and schedule.report_id == source.id:
        return {}
    return {
        "report_id": source.id,
        "report_version_seen": source.version,
        "source_query_id": None,
        "query_definition": None,
        "query_version": None,
    }


def checked_recipients(
    access: RequesterContext, people: list[str], addresses: str, has_destinations: bool = False
) -> list[Recipient]:
    """The recipients the form names, in order: people picked, then addresses typed, one a line.

    An address of a workspace member counts as that person. Each problem has its own message.
    None at all is refused unless the schedule delivers to a destination.
    """
    members = {
        person.id: person.email.lower()
        for person in db.session.scalars(
            select(Person)
            .join(Membership, Membership.person_id == Person.id)
            .where(Membership.workspace_id == access.workspace_id)
        )
    }
    by_address = {email: person_id for person_id, email in members.items()}
    recipients: list[Recipient] = []
    seen: dict[str, str] = {}

    def add(recipient: Recipient, shown: str, field_name: str) -> None:
        key = recipient.address_key
        if key in seen:
            raise ValidationError(f"{shown} is a recipient twice; list each recipient once.", field_name)
        if len(recipients) == MAX_RECIPIENTS:
            raise ValidationError(
                f"A schedule has at most {MAX_RECIPIENTS} recipients; {shown} would be number {MAX_RECIPIENTS + 1}.",
                field_name,
            )
        seen[key] = shown
        recipients.append(recipient)

    for raw in people:
        person_id = database_id(raw)
        if person_id is None or person_id not in members:
            raise ValidationError("Choose recipients from the people of this workspace.", "people")
        add(Recipient(person_id, None), members[person_id], "people")
    for typed in addresses_one_a_line(addresses or "", "addresses"):
        address = typed.typed
        member_id = by_address.get(address.lower())
        if member_id is not None:
            add(Recipient(member_id, None), address, "addresses")
            continue
        if not access.has_grant(EXTERNAL_GRANT):
            raise ValidationError(
                f"{address} is not a person of this workspace. Sending to other addresses needs the "
                "external-recipients permission, which you do not have.",
                "addresses",
            )
        add(Recipient(None, address), address, "addresses")
    if not recipients and not has_destinations:
        raise ValidationError("Choose at least one recipient.", "people")
    return recipients


def checked_destinations(access: RequesterContext, chosen: list[str], chosen_before: list[int]) -> list[int]:
    """The destinations the form chose, in the registry's order: live destinations of the
    workspace, at most MAX_DESTINATIONS. Only administrators choose them (they hold the
    destinations' keys); anyone else saving keeps what an administrator chose, a removed one too
    (the schedule's page says it no longer receives)."""
    ids = {database_id(raw) for raw in chosen}
    if not access.is_admin:
        if ids != set(chosen_before):
            raise ValidationError(
                "Only the workspace's administrators choose the destinations a schedule delivers to.", "destinations"
            )
        return chosen_before
    live = [destination.id for destination in registry.list_destinations(access.workspace_id)]
    if not ids <= set(live):
        raise ValidationError(
            "A chosen destination is not one of this workspace's destinations (any more). Choose again.",
            "destinations",
        )
    if len(ids) > MAX_DESTINATIONS:
        raise ValidationError(
            f"A schedule delivers to at most {MAX_DESTINATIONS} destinations; {len(ids)} are chosen.", "destinations"
        )
    return [destination_id for destination_id in live if destination_id in ids]


def _replace_recipients(schedule_id: int, recipients: list[Recipient]) -> None:
    db.session.execute(delete(ScheduleRecipient).where(ScheduleRecipient.schedule_id == schedule_id))
    for position, recipient in enumerate(recipients):
        db.session.add(
            ScheduleRecipient(
                schedule_id=schedule_id,
                position=position,
                person_id=recipient.person_id,
                email=recipient.email,
                address_key=recipient.address_key,
            )
        )
    db.session.flush()


def _replace_destinations(schedule_id: int, destination_ids: list[int]) -> None:
    db.session.execute(delete(ScheduleDestination).where(ScheduleDestination.schedule_id == schedule_id))
    for position, destination_id in enumerate(destination_ids):
        db.session.add(ScheduleDestination(schedule_id=schedule_id, destination_id=destination_id, position=position))
    db.session.flush()


def _checked_template_version(workspace_id: int, text: str) -> int | None:
    if not (text or "").strip():
        return None
    version_id = database_id(text)
    published = dict((version.id, name) for version, name in published_template_versions(workspace_id))
    if version_id not in published:
        raise ValidationError("Choose a published version of one of this workspace's templates.", "template_version_id")
    return version_id
