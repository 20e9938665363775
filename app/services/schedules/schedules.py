"""Schedules: who sees which, and the delete, pause, resume, ownership and "Run now" use cases
(saving a schedule is app/services/schedules/schedule_form.py; its page's times and history,
app/services/schedules/schedule_history.py).

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

from sqlalchemy import delete, func, select, update

from app.domain.errors import AccessDenied, TransitionRefused, ValidationError
from app.domain.people.access import RequesterContext, current_context
from app.domain.schedules import schedule_lifecycle
from app.domain.schedules.schedule_rules import allowed_formats
from app.domain.timing.timetable import Timetable, next_occurrence
from app.extensions import db
from app.models import ExportFile, Person, Report, SavedQuery, Workspace
from app.models.schedule import (
    ACTIVE_RUN_STATUSES,
    CommunicationTemplate,
    CommunicationTemplateVersion,
    PauseReason,
    RunTrigger,
    Schedule,
    ScheduleKind,
    ScheduleRun,
    ScheduleStatus,
    SendCondition,
    TemplateStatus,
)
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.pages.list_pages import ListFilter, ListRequest, ListSpec, Page, a_to_z, page_of, recently_changed
from app.services.schedules.schedule_admission import admit_run
from app.services.sources import reports, saved_queries
from app.vocabulary import Heading

MANAGE_GRANT = "schedules.manage"
EXTERNAL_GRANT = "schedules.external_recipients"


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
    heading: str = Heading.NAMES
    timetable: dict = field(default_factory=dict)
    people: list[str] = field(default_factory=list)
    addresses: str = ""
    template_version_id: str = ""
    custom_message: str = ""
    send_condition: str = SendCondition.ALWAYS
    alert_with_file: bool = False
    run_as_recipients: bool = False
    attach_file: bool = False
    # The ids of the workspace's destinations chosen (administrators only).
    destinations: list[str] = field(default_factory=list)


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
        "name": a_to_z(Schedule.name, Schedule.id),
        "updated": recently_changed(Schedule.updated_at, Schedule.id),
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


def visible_names(access: RequesterContext) -> dict[int, str]:
    """The names of the schedules the person may see, by id, A–Z: the Files list's Schedule filter."""
    rows = db.session.execute(
        select(Schedule.id, Schedule.name).where(*_visible(access)).order_by(func.lower(Schedule.name), Schedule.id)
    )
    return {schedule_id: name for schedule_id, name in rows}


def schedule_names(files: list[ExportFile]) -> dict[int, str]:
    """The names of the schedules that produced these files (those still in the files' workspace), by id."""
    ids = {export.schedule_id for export in files if export.schedule_id is not None}
    if not ids:
        return {}
    workspace_ids = {export.workspace_id for export in files}
    rows = db.session.execute(
        select(Schedule.id, Schedule.name).where(Schedule.id.in_(ids), Schedule.workspace_id.in_(workspace_ids))
    )
    return {schedule_id: name for schedule_id, name in rows}


def producing_schedule(export: ExportFile) -> Schedule | None:
    """The schedule that produced the file, if one did and it still exists in the file's workspace."""
    if export.schedule_id is None:
        return None
    return db.session.execute(
        select(Schedule).where(Schedule.id == export.schedule_id, Schedule.workspace_id == export.workspace_id)
    ).scalar_one_or_none()


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


@dataclass(frozen=True)
class SourceChoice:
    """A saved query or report the schedule form offers, with the file formats a schedule of it makes."""

    label: str
    formats: tuple[str, ...]


def source_choices(access: RequesterContext) -> dict[str, SourceChoice]:
    """The saved queries and reports the person may schedule, by form value."""
    choices = {
        f"{ScheduleKind.QUERY}:{q.query.id}": SourceChoice(
            f"Query: {q.query.name}", allowed_formats(ScheduleKind.QUERY)
        )
        for q in saved_queries.list_queries(access)
    }
    choices.update(
        {
            f"{ScheduleKind.REPORT}:{r.report.id}": SourceChoice(
                f"Report: {r.report.name}", allowed_formats(ScheduleKind.REPORT, r.report.kind)
            )
            for r in reports.list_reports(access)
        }
    )
    return choices


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
    if schedule.kind != ScheduleKind.QUERY or listing is None:
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
    if schedule.kind == ScheduleKind.QUERY and schedule.source_query_id is not None:
        current = db.session.scalar(select(SavedQuery.version).where(SavedQuery.id == schedule.source_query_id))
        return current if current is not None and current != schedule.query_version else None
    if schedule.kind == ScheduleKind.REPORT and schedule.report_id is not None:
        current = db.session.scalar(select(Report.version).where(Report.id == schedule.report_id))
        return current if current is not None and current != schedule.report_version_seen else None
    return None


def pause_schedule(access: RequesterContext, schedule: Schedule) -> None:
    try:
        schedule_lifecycle.pause(schedule.id, PauseReason.USER)
    except TransitionRefused:
        raise ValidationError("This schedule is paused already.", "status") from None
    audit_pause(access.workspace_id, schedule.id, PauseReason.USER, access.person_id)
    db.session.commit()


def resume_blockers(schedule: Schedule, legacy_confirmed: bool) -> list[str]:
    """What still stops the schedule from running again; empty when it may resume."""
    blockers = []
    if schedule.pause_reason == PauseReason.LEGACY_IMPORT and not legacy_confirmed:
        blockers.append("Tick the confirmation that the old system's delivery of this schedule has been switched off.")
    dataset = None
    if schedule.kind == ScheduleKind.REPORT:
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
        schedule_lifecycle.resume(schedule.id, PauseReason(reason), following)
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
        schedule_lifecycle.transfer_ownership(schedule.id, previous, access.person_id)
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
    for schedule_id in schedule_lifecycle.pause_those_sending_report(workspace_id, report_id):
        audit_pause(workspace_id, schedule_id, PauseReason.SOURCE_REMOVED, actor_id, {"report_id": report_id})


def audit_pause(
    workspace_id: int, schedule_id: int, reason: PauseReason, actor_id: int | None, details: dict | None = None
) -> None:
    """The audit event of a schedule's pause, by a person (`actor_id`) or by its runs (None). Not committed."""
    audit.record(
        workspace_id=workspace_id,
        actor_id=actor_id,
        action="schedule.paused",
        subject_type="schedule",
        subject_id=schedule_id,
        reason=reason,
        details=details,
    )
