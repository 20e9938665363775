"""Schedules: who sees which, and the create, edit, delete, pause, resume, ownership and "Run now" use cases.

People with the `schedules.manage` grant (and administrators) see and manage every schedule of
the workspace; everyone else sees and manages only the schedules they own. A query schedule
keeps a snapshot of its saved query's definition and version, replaced only by
`refresh_from_query` (INV-07): editing anything else never re-pins it. A report schedule keeps
the report and the version it last saw. Recipients are at most MAX_RECIPIENTS distinct people of
the workspace or addresses; an address that is no member's needs the saver's
`schedules.external_recipients` grant (INV-06). Every state change commits with its audit event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from app.domain import schedule as lifecycle
from app.domain.access import RequesterContext, current_context
from app.domain.email_address import check_address
from app.domain.errors import AccessDenied, TransitionRefused, ValidationError
from app.domain.text_rules import database_id, refuse_line_breaks, refuse_unstorable
from app.domain.timetable import OccurrenceInZones, Timetable, next_occurrence, next_occurrences, viewer_times
from app.extensions import db, execute_dml
from app.models import AuditEvent, Membership, Person, QueryExport, Report, SavedQuery, Workspace
from app.models.schedule import (
    MAX_RECIPIENTS,
    CommunicationTemplate,
    CommunicationTemplateVersion,
    PauseReason,
    RunStatus,
    RunTrigger,
    Schedule,
    ScheduleRecipient,
    ScheduleRun,
    ScheduleStatus,
    ScheduleUnsubscribe,
    TemplateStatus,
)
from app.models.types import utcnow
from app.services import audit, reports, saved_queries
from app.services.list_pages import MOMENT, NUMBER, TEXT, ListFilter, ListRequest, ListSpec, Page, SortOrder, page_of
from app.services.report_files import REPORT_FORMATS
from app.services.schedule_admission import admit_run

MANAGE_GRANT = "schedules.manage"
EXTERNAL_GRANT = "schedules.external_recipients"
NAME_LIMIT = 200
MESSAGE_LIMIT = 5000
QUERY_FORMATS = {"csv": "CSV", "xlsx": "Excel (XLSX)"}
HEADINGS = {"names": "Column names", "labels": "Column labels", "none": "No heading row"}
ACTIVE_RUN_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)
HISTORY_RUNS = 20
# One @, something before it, a dot in the domain, no spaces: the mail server judges the rest.


@dataclass(frozen=True)
class ScheduleListing:
    schedule: Schedule
    owner_name: str
    source_name: str | None
    last_run: ScheduleRun | None = None

    @property
    def timetable_description(self) -> str:
        try:
            return Timetable.from_json(self.schedule.timetable, "UTC").describe()
        except ValidationError as refused:
            return f"The stored timetable cannot be read ({refused}); edit the schedule to set it again."


@dataclass
class ScheduleInput:
    """What the form says, as text: `save_schedule` judges every field."""

    name: str = ""
    source: str = ""
    format: str = ""
    heading: str = "names"
    timetable: dict = field(default_factory=dict)
    people: list[str] = field(default_factory=list)
    addresses: str = ""
    template_version_id: str = ""
    custom_message: str = ""
    send_when_empty: bool = False


@dataclass(frozen=True)
class Recipient:
    person_id: int | None
    email: str | None

    @property
    def address_key(self) -> str:
        if self.person_id is not None:
            return f"person:{self.person_id}"
        if self.email is None:
            raise ValueError("a recipient is a person or an email address")
        return self.email.lower()


# Seeing


def manages_all(access: RequesterContext) -> bool:
    return access.has_grant(MANAGE_GRANT)


def _visible(access: RequesterContext):
    clause = [Schedule.workspace_id == access.workspace_id]
    if not manages_all(access):
        clause.append(Schedule.owner_id == access.person_id)
    return clause


def _listing_select():
    return (
        select(Schedule, Person.name, func.coalesce(SavedQuery.name, Report.name))
        .join(Person, Person.id == Schedule.owner_id)
        .outerjoin(SavedQuery, SavedQuery.id == Schedule.source_query_id)
        .outerjoin(Report, Report.id == Schedule.report_id)
    )


SCHEDULE_LIST = ListSpec(
    name="schedules",
    sorts={
        "name": SortOrder("Name A–Z", (func.lower(Schedule.name), Schedule.id), (TEXT, NUMBER)),
        "updated": SortOrder("Recently changed", (Schedule.updated_at, Schedule.id), (MOMENT, NUMBER), True),
    },
    filters={"status": ListFilter("Status", {ScheduleStatus.ACTIVE: "Active", ScheduleStatus.PAUSED: "Paused"})},
    search_columns=(Schedule.name, SavedQuery.name, Report.name),
)


def page_schedules(access: RequesterContext, request: ListRequest) -> Page:
    """One page of the schedules the person may see, searched (name or source), filtered and ordered
    as asked, each with its latest run."""
    statement = _listing_select().where(*_visible(access))
    if "status" in request.filters:
        statement = statement.where(Schedule.status == request.filters["status"])
    page = page_of(SCHEDULE_LIST, request, statement)
    latest = _latest_runs([schedule.id for schedule, _, _ in page.rows])
    listings = [
        ScheduleListing(schedule, owner, source, latest.get(schedule.id)) for schedule, owner, source in page.rows
    ]
    return page.with_rows(listings)


def get_schedule(access: RequesterContext, schedule_id: int) -> ScheduleListing | None:
    """One schedule the person may see and manage, or None (not there, another workspace, someone else's)."""
    row = db.session.execute(_listing_select().where(Schedule.id == schedule_id, *_visible(access))).one_or_none()
    if row is None:
        return None
    schedule, owner, source = row
    return ScheduleListing(schedule, owner, source, _latest_runs([schedule.id]).get(schedule.id))


def _latest_runs(schedule_ids: list[int]) -> dict[int, ScheduleRun]:
    if not schedule_ids:
        return {}
    newest = (
        select(ScheduleRun.schedule_id, func.max(ScheduleRun.occurrence_at).label("at"))
        .where(ScheduleRun.schedule_id.in_(schedule_ids))
        .group_by(ScheduleRun.schedule_id)
        .subquery()
    )
    runs = db.session.scalars(
        select(ScheduleRun).join(
            newest, (newest.c.schedule_id == ScheduleRun.schedule_id) & (newest.c.at == ScheduleRun.occurrence_at)
        )
    )
    return {run.schedule_id: run for run in runs}


def workspace_zone(workspace_id: int) -> str:
    return db.session.scalar(select(Workspace.time_zone).where(Workspace.id == workspace_id)) or "UTC"


def source_choices(access: RequesterContext) -> dict[str, str]:
    """The saved queries and reports the person may schedule, as form values and labels."""
    choices = {f"query:{q.query.id}": f"Query: {q.query.name}" for q in saved_queries.list_queries(access)}
    choices.update({f"report:{r.report.id}": f"Report: {r.report.name}" for r in reports.list_reports(access)})
    return choices


def people_choices(workspace_id: int) -> list[Person]:
    return list(
        db.session.scalars(
            select(Person)
            .join(Membership, Membership.person_id == Person.id)
            .where(Membership.workspace_id == workspace_id)
            .order_by(func.lower(Person.name), Person.id)
        )
    )


def published_template_versions(workspace_id: int) -> list[tuple[CommunicationTemplateVersion, str]]:
    rows = db.session.execute(
        select(CommunicationTemplateVersion, CommunicationTemplate.name)
        .join(CommunicationTemplate, CommunicationTemplate.id == CommunicationTemplateVersion.template_id)
        .where(
            CommunicationTemplate.workspace_id == workspace_id,
            CommunicationTemplateVersion.status == TemplateStatus.PUBLISHED,
        )
        .order_by(func.lower(CommunicationTemplate.name), CommunicationTemplateVersion.number.desc())
    ).all()
    return [(version, name) for version, name in rows]


# Saving


def input_of(schedule: Schedule) -> ScheduleInput:
    """The form's values for a saved schedule."""
    source = f"query:{schedule.source_query_id}" if schedule.kind == "query" else f"report:{schedule.report_id or ''}"
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
        send_when_empty=schedule.send_when_empty,
    )


def save_schedule(
    access: RequesterContext, schedule: Schedule | None, data: ScheduleInput, expected_version: int | None = None
) -> Schedule:
    """Create (`schedule` None) or change a schedule; ValidationError names the first bad field, nothing is written."""
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
        ],
        "form",
        "the form",
    )
    name = _checked_name(data.name)
    kind, source = _checked_source(access, data.source)
    fmt = _checked_format(kind, source, data.format)
    heading = _checked_heading(kind, data.heading)
    timetable = Timetable.from_json(data.timetable, workspace_zone(access.workspace_id))
    recipients = checked_recipients(access, data.people, data.addresses)
    template_version_id = _checked_template_version(access.workspace_id, data.template_version_id)
    message = data.custom_message.strip()
    if len(message) > MESSAGE_LIMIT:
        raise ValidationError(f"The custom message is at most {MESSAGE_LIMIT:,} characters.", "custom_message")
    existing_id = None if schedule is None else schedule.id
    _refuse_taken_name(access.workspace_id, name, existing_id)

    now = utcnow()
    values = {
        "name": name,
        "format": fmt,
        "heading": heading,
        "timetable": timetable.to_json(),
        "template_version_id": template_version_id,
        "custom_message": message,
        "send_when_empty": bool(data.send_when_empty),
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
                raise ValidationError(
                    "Someone saved this schedule after you opened it. Open it again to see their changes.", "version"
                )
            action = "schedule.changed"
        _replace_recipients(schedule.id, recipients)
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
        _refuse_taken_name(access.workspace_id, name, existing_id)
        raise ValidationError("The chosen source or template was removed meanwhile. Choose again.", "source") from None
    db.session.refresh(schedule)
    return schedule


def _checked_name(text: str) -> str:
    refuse_line_breaks(text or "", "name", "the name")
    name = (text or "").strip()
    if not name:
        raise ValidationError("Give the schedule a name.", "name")
    if len(name) > NAME_LIMIT:
        raise ValidationError(f"The name is at most {NAME_LIMIT} characters.", "name")
    return name


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
    if kind == "query" and source_id is not None:
        query_listing = saved_queries.get_query(access, source_id)
        found = query_listing.query if query_listing else None
    elif kind == "report" and source_id is not None:
        report_listing = reports.get_report(access, source_id)
        found = report_listing.report if report_listing else None
    if found is None:
        raise ValidationError("Choose the saved query or report the schedule sends.", "source")
    return kind, found


def _checked_format(kind: str, source: SavedQuery | Report, text: str) -> str:
    allowed = QUERY_FORMATS if isinstance(source, SavedQuery) else {fmt: REPORT_FORMATS[fmt] for fmt in source.formats}
    if text not in allowed:
        spoken = " or ".join(allowed.values())
        raise ValidationError(f"Choose the file format: this {kind} can be sent as {spoken}.", "format")
    return text


def _checked_heading(kind: str, text: str) -> str:
    """A query file's heading row; a report prints its own headings, so it keeps the default."""
    if kind != "query":
        return "names"
    if text not in HEADINGS:
        raise ValidationError("Choose the heading row: column names, column labels or none.", "heading")
    return text


def _source_values(schedule: Schedule | None, source: SavedQuery | Report) -> dict:
    """The source columns; a query schedule keeps its snapshot while it names the same query (INV-07)."""
    if isinstance(source, SavedQuery):
        if schedule is not None and schedule.kind == "query" and schedule.source_query_id == source.id:
            return {}
        return {
            "source_query_id": source.id,
            "query_definition": source.definition(),
            "query_version": source.version,
            "report_id": None,
            "report_version_seen": None,
        }
    if schedule is not None and schedule.kind == "report" and schedule.report_id == source.id:
        return {}
    return {
        "report_id": source.id,
        "report_version_seen": source.version,
        "source_query_id": None,
        "query_definition": None,
        "query_version": None,
    }


def checked_recipients(access: RequesterContext, people: list[str], addresses: str) -> list[Recipient]:
    """The recipients the form names, in order: people picked, then addresses typed, one a line.

    An address of a workspace member counts as that person. Each problem has its own message.
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
    for line in (addresses or "").splitlines():
        address = line.strip()
        if not address:
            continue
        address = check_address(address, "addresses").typed
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
    if not recipients:
        raise ValidationError("Choose at least one recipient.", "people")
    return recipients


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


def _checked_template_version(workspace_id: int, text: str) -> int | None:
    if not (text or "").strip():
        return None
    version_id = database_id(text)
    published = dict((version.id, name) for version, name in published_template_versions(workspace_id))
    if version_id not in published:
        raise ValidationError("Choose a published version of one of this workspace's templates.", "template_version_id")
    return version_id


# The schedule's own changes


def delete_schedule(access: RequesterContext, schedule: Schedule) -> None:
    """Remove the schedule with its recipients and runs; files it produced stay on the Files page."""
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action="schedule.deleted",
        subject_type="schedule",
        subject_id=schedule.id,
        details={"name": schedule.name},
    )
    db.session.execute(delete(Schedule).where(Schedule.id == schedule.id, Schedule.workspace_id == access.workspace_id))
    db.session.commit()


def refresh_from_query(access: RequesterContext, schedule: Schedule) -> Schedule:
    """Take a new snapshot of the saved query (the only way a query schedule's definition changes)."""
    listing = saved_queries.get_query(access, schedule.source_query_id) if schedule.source_query_id else None
    if schedule.kind != "query" or listing is None:
        raise ValidationError("This schedule has no saved query you can read to refresh from.", "source")
    query = listing.query
    db.session.execute(
        update(Schedule)
        .where(Schedule.id == schedule.id, Schedule.workspace_id == access.workspace_id)
        .values(
            query_definition=query.definition(),
            query_version=query.version,
            version=Schedule.version + 1,
            updated_at=utcnow(),
        )
        .execution_options(synchronize_session=False)
    )
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action="schedule.refreshed",
        subject_type="schedule",
        subject_id=schedule.id,
        details={"from_version": schedule.query_version, "to_version": query.version},
    )
    db.session.commit()
    db.session.refresh(schedule)
    return schedule


def source_moved_on(schedule: Schedule) -> int | None:
    """The saved query's or report's current version when it is newer than the one the schedule holds."""
    if schedule.kind == "query" and schedule.source_query_id is not None:
        current = db.session.scalar(select(SavedQuery.version).where(SavedQuery.id == schedule.source_query_id))
        return current if current is not None and current != schedule.query_version else None
    if schedule.kind == "report" and schedule.report_id is not None:
        current = db.session.scalar(select(Report.version).where(Report.id == schedule.report_id))
        return current if current is not None and current != schedule.report_version_seen else None
    return None


def pause_schedule(access: RequesterContext, schedule: Schedule) -> None:
    try:
        lifecycle.pause(schedule.id, PauseReason.USER)
    except TransitionRefused:
        raise ValidationError("This schedule is paused already.", "status") from None
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action="schedule.paused",
        subject_type="schedule",
        subject_id=schedule.id,
        reason=PauseReason.USER,
    )
    db.session.commit()


def resume_blockers(schedule: Schedule, legacy_confirmed: bool) -> list[str]:
    """What still stops the schedule from running again; empty when it may resume."""
    blockers = []
    if schedule.pause_reason == PauseReason.LEGACY_IMPORT and not legacy_confirmed:
        blockers.append("Tick the confirmation that the old system's delivery of this schedule has been switched off.")
    dataset = None
    if schedule.kind == "report":
        row = (
            db.session.execute(
                select(Report.id, SavedQuery.dataset)
                .join(SavedQuery, SavedQuery.id == Report.source_query_id)
                .where(Report.id == schedule.report_id, Report.workspace_id == schedule.workspace_id)
            ).one_or_none()
            if schedule.report_id is not None
            else None
        )
        if row is None:
            blockers.append("Its report was deleted: edit the schedule and choose another source.")
        else:
            dataset = row.dataset
    else:
        dataset = (schedule.query_definition or {}).get("dataset")
    owner = current_context(schedule.workspace_id, schedule.owner_id)
    if owner is None:
        blockers.append(
            "Its owner is no longer a member of this workspace: someone with schedule authority can take ownership."
        )
    elif dataset is not None and not owner.can_read_dataset(dataset):
        blockers.append(
            "Its owner can no longer read the data it sends: give the owner access again, "
            "or have someone with access take ownership."
        )
    return blockers


def resume_schedule(access: RequesterContext, schedule: Schedule, legacy_confirmed: bool) -> None:
    """paused → active when the cause is gone; ValidationError saying what still blocks it otherwise."""
    if schedule.status != ScheduleStatus.PAUSED:
        raise ValidationError("This schedule is running already.", "status")
    blockers = resume_blockers(schedule, legacy_confirmed)
    if blockers:
        raise ValidationError("The schedule was not resumed. " + " ".join(blockers), "status")
    reason = schedule.pause_reason
    if reason is None:
        # The table's check constraint gives every paused schedule its reason.
        raise ValueError(f"paused schedule {schedule.id} has no pause reason")
    now = utcnow()
    following = next_occurrence(Timetable.from_json(schedule.timetable, "UTC"), now)
    try:
        lifecycle.resume(schedule.id, PauseReason(reason), following)
    except TransitionRefused:
        raise ValidationError("The schedule changed meanwhile. Reload the page and try again.", "status") from None
    # From now: the ticker does not catch up on the occurrences missed while paused.
    db.session.execute(update(Schedule).where(Schedule.id == schedule.id).values(last_occurrence_at=now))
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action="schedule.resumed",
        subject_type="schedule",
        subject_id=schedule.id,
        reason=reason,
        details={"legacy_confirmed": True} if reason == PauseReason.LEGACY_IMPORT else None,
    )
    db.session.commit()


def take_ownership(access: RequesterContext, schedule: Schedule) -> None:
    if not manages_all(access):
        raise AccessDenied("Taking ownership needs schedule-management authority.")
    if schedule.owner_id == access.person_id:
        raise ValidationError("You own this schedule already.", "owner")
    previous = schedule.owner_id
    try:
        lifecycle.transfer_ownership(schedule.id, previous, access.person_id)
    except TransitionRefused:
        raise ValidationError("The owner changed meanwhile. Reload the page and try again.", "owner") from None
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action="schedule.ownership_taken",
        subject_type="schedule",
        subject_id=schedule.id,
        details={"from_owner_id": previous, "to_owner_id": access.person_id},
    )
    db.session.commit()


@dataclass(frozen=True)
class RunNow:
    """What a press of "Run now" did: admitted `run`, or found the run it stands for (`admitted` False)."""

    run: ScheduleRun
    admitted: bool


def run_now(access: RequesterContext, schedule: Schedule, request_key: str | None) -> RunNow:
    """Admit an immediate run; the timetable's next occurrence stays where it was.

    One intent, one run: the form sent again with its key (text_rules.request_key) finds the run
    that key admitted, and while a run started by hand is queued or running a press finds that
    run. The unique indexes decide when two presses race past these lookups.
    """
    if schedule.status != ScheduleStatus.ACTIVE:
        raise ValidationError("A paused schedule does not run. Resume it first.", "run")
    found = _run_of_press(schedule, request_key)
    if found is not None:
        return RunNow(found, admitted=False)
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=access.workspace_id,
        occurrence_at=utcnow(),
        trigger=RunTrigger.MANUAL,
        request_token=request_key,
    )
    if run is None:
        found = _run_of_press(schedule, request_key)
        if found is None:
            raise ValidationError("A run for this moment was started already.", "run")
        return RunNow(found, admitted=False)
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action="schedule.run_requested",
        subject_type="schedule",
        subject_id=schedule.id,
        details={"run_id": run.id},
    )
    db.session.commit()
    return RunNow(run, admitted=True)


def _run_of_press(schedule: Schedule, request_key: str | None) -> ScheduleRun | None:
    """The run this press of "Run now" stands for: the one its form's key admitted, else the
    schedule's manual run still queued or running."""
    scope = (ScheduleRun.schedule_id == schedule.id, ScheduleRun.workspace_id == schedule.workspace_id)
    if request_key is not None:
        admitted = db.session.scalar(select(ScheduleRun).where(*scope, ScheduleRun.request_token == request_key))
        if admitted is not None:
            return admitted
    return db.session.scalar(
        select(ScheduleRun).where(
            *scope, ScheduleRun.trigger == RunTrigger.MANUAL, ScheduleRun.status.in_(ACTIVE_RUN_STATUSES)
        )
    )


# Timetable preview and history


@dataclass(frozen=True)
class Upcoming:
    description: str
    occurrences: list
    schedule_zone: str
    viewer_zone: str


def upcoming(timetable_fields: dict, workspace_id: int, viewer_zone: str, count: int = 5) -> Upcoming:
    """The next `count` occurrences in the schedule's zone and the viewer's; ValidationError for a bad timetable."""
    refuse_unstorable([timetable_fields, viewer_zone], "timetable", "the timetable")
    default_zone = workspace_zone(workspace_id)
    timetable = Timetable.from_json(timetable_fields, default_zone)
    viewer = viewer_zone.strip() if isinstance(viewer_zone, str) and viewer_zone.strip() else default_zone
    try:
        shown = viewer_times(next_occurrences(timetable, utcnow(), count), timetable.zone, viewer)
    except ValidationError:
        viewer = default_zone
        shown = viewer_times(next_occurrences(timetable, utcnow(), count), timetable.zone, viewer)
    return Upcoming(timetable.describe(), shown, timetable.zone, viewer)


def in_schedule_zone(schedule: Schedule, moment: datetime | None) -> OccurrenceInZones | None:
    """`moment` on the schedule's own wall clock; None without a moment (or a readable zone)."""
    if moment is None:
        return None
    zone = (schedule.timetable or {}).get("zone") or "UTC"
    try:
        return viewer_times([moment], zone, zone)[0]
    except ValidationError:
        return None


@dataclass(frozen=True)
class RunHistory:
    runs: list[ScheduleRun]
    people: dict[int, str]
    files: dict[int, QueryExport]

    @property
    def active(self) -> bool:
        return any(run.status in ACTIVE_RUN_STATUSES for run in self.runs)


def run_history(schedule: Schedule) -> RunHistory:
    runs = list(
        db.session.scalars(
            select(ScheduleRun)
            .where(ScheduleRun.schedule_id == schedule.id, ScheduleRun.workspace_id == schedule.workspace_id)
            .order_by(ScheduleRun.occurrence_at.desc(), ScheduleRun.id.desc())
            .limit(HISTORY_RUNS)
        )
    )
    person_ids = {d.person_id for run in runs for d in run.deliveries if d.person_id is not None}
    people = (
        dict(db.session.execute(select(Person.id, Person.name).where(Person.id.in_(person_ids))).tuples().all())
        if person_ids
        else {}
    )
    export_ids = {run.export_id for run in runs if run.export_id is not None}
    files = (
        {f.id: f for f in db.session.scalars(select(QueryExport).where(QueryExport.id.in_(export_ids)))}
        if export_ids
        else {}
    )
    return RunHistory(runs, people, files)


def history_events(schedule: Schedule) -> list[tuple[AuditEvent, str | None]]:
    """The schedule's audit trail, newest first, with the actor's name."""
    return [
        (event, name)
        for event, name in db.session.execute(
            select(AuditEvent, Person.name)
            .outerjoin(Person, Person.id == AuditEvent.actor_id)
            .where(
                AuditEvent.subject_type == "schedule",
                AuditEvent.subject_id == schedule.id,
                AuditEvent.workspace_id == schedule.workspace_id,
            )
            .order_by(AuditEvent.id.desc())
            .limit(50)
        ).all()
    ]


def unsubscribed_since(schedule: Schedule) -> dict[str, datetime]:
    """When each recipient who unsubscribed from the schedule did so, by address key."""
    return dict(
        db.session.execute(
            select(ScheduleUnsubscribe.address_key, ScheduleUnsubscribe.created_at).where(
                ScheduleUnsubscribe.schedule_id == schedule.id
            )
        )
        .tuples()
        .all()
    )


def person_names(ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict(db.session.execute(select(Person.id, Person.name).where(Person.id.in_(ids))).tuples().all())


# What other areas call


def schedules_using_query(workspace_id: int, query_id: int) -> list[str]:
    return list(
        db.session.scalars(
            select(Schedule.name)
            .where(Schedule.workspace_id == workspace_id, Schedule.source_query_id == query_id)
            .order_by(func.lower(Schedule.name))
        )
    )


def pause_for_removed_report(workspace_id: int, actor_id: int, report_id: int) -> None:
    """Pause the active schedules of a report being deleted with `source_removed` (not committed)."""
    now = utcnow()
    paused = db.session.scalars(
        update(Schedule)
        .where(
            Schedule.workspace_id == workspace_id,
            Schedule.report_id == report_id,
            Schedule.status == ScheduleStatus.ACTIVE,
        )
        .values(status=ScheduleStatus.PAUSED, pause_reason=PauseReason.SOURCE_REMOVED, paused_at=now)
        .returning(Schedule.id)
        .execution_options(synchronize_session=False)
    ).all()
    for schedule_id in paused:
        audit.record(
            workspace_id=workspace_id,
            actor_id=actor_id,
            action="schedule.paused",
            subject_type="schedule",
            subject_id=schedule_id,
            reason=PauseReason.SOURCE_REMOVED,
            details={"report_id": report_id},
        )
