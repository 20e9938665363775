"""Writes the demo workspace's message template and the administrator's schedules
(data_schedules.py) directly, with the rows their story leaves behind: the legacy import's audit
event, and the failed run with its attempts, recipient rows and unsubscribe. No file or message
exists for them; the active schedules run at their next occurrences once the scheduler is up.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from flask import current_app

from app.domain.schedules.schedule_rules import RecipientChoice
from app.domain.sources.query_spec import validate_definition
from app.domain.timing.timetable import Timetable, next_occurrence, next_occurrences
from app.extensions import db
from app.models import (
    CommunicationTemplate,
    CommunicationTemplateVersion,
    Person,
    Report,
    SavedQuery,
    Schedule,
    ScheduleRecipient,
    ScheduleRun,
    ScheduleRunAttempt,
    ScheduleUnsubscribe,
    Workspace,
)
from app.models.schedule import (
    DeliveryStatus,
    PauseReason,
    RecipientDelivery,
    RunStatus,
    RunTrigger,
    ScheduleStatus,
    SkipReason,
    TemplateStatus,
)
from app.services.demo.data_schedules import SCHEDULES, TEMPLATE_NAME, TEMPLATE_VERSIONS, FailedRun, ScheduleSeed
from app.services.demo.data_workspaces import Login
from app.services.schedules.legacy_import import record_import


def add_template(workspace: Workspace, author: Person, now: datetime) -> CommunicationTemplateVersion:
    """The workspace's message template: version 1 published, version 2 a draft. Returns version 1."""
    template = CommunicationTemplate(
        workspace_id=workspace.id, name=TEMPLATE_NAME, created_by_id=author.id, created_at=now - timedelta(days=60)
    )
    published_on = now - timedelta(days=59)
    (subject_1, body_1), (subject_2, body_2) = TEMPLATE_VERSIONS
    template.versions = [
        CommunicationTemplateVersion(
            number=1,
            status=TemplateStatus.PUBLISHED,
            subject=subject_1,
            body=body_1,
            created_by_id=author.id,
            created_at=published_on,
            published_at=published_on,
        ),
        CommunicationTemplateVersion(
            number=2,
            status=TemplateStatus.DRAFT,
            subject=subject_2,
            body=body_2,
            created_by_id=author.id,
            created_at=now - timedelta(days=2),
        ),
    ]
    db.session.add(template)
    db.session.flush()
    return template.versions[0]


def add_schedules(
    workspace: Workspace,
    people: dict[Login, Person],
    owner: Person,
    sources: tuple[dict[str, SavedQuery], dict[str, Report]],
    template_version: CommunicationTemplateVersion,
    now: datetime,
) -> None:
    """Every schedule of SCHEDULES, owned by `owner`, with the audit event of an import and the
    last run of one that failed."""
    max_rows = current_app.config["SETTINGS"].max_export_rows
    created = now - timedelta(days=30)
    written = []
    for seed in SCHEDULES:
        timetable = Timetable.from_json(seed.timetable, workspace.time_zone)
        schedule = Schedule(
            workspace_id=workspace.id,
            name=seed.name,
            owner_id=owner.id,
            timetable=timetable.to_json(),
            next_occurrence_at=next_occurrence(timetable, now),
            created_at=created,
            updated_at=created,
            format=seed.format,
            heading=seed.heading,
            custom_message=seed.custom_message,
            template_version_id=template_version.id,
            # A last run that failed is the first failure in a row.
            failure_streak=0 if seed.last_run is None else 1,
            **_source(seed, sources, max_rows),
        )
        if seed.legacy_ref is not None:
            _paused_by_import(schedule, seed.legacy_ref, now)
        schedule.recipients = _recipients(seed, people)
        db.session.add(schedule)
        written.append((seed, schedule))
    db.session.flush()
    for seed, schedule in written:
        if seed.legacy_ref is not None:
            record_import(schedule, seed.legacy_ref, entry=1, origin="demo seed")
    for seed, schedule in written:
        if seed.last_run is not None:
            _add_failed_run(workspace, schedule, seed.last_run, now)


def _source(seed: ScheduleSeed, sources: tuple[dict[str, SavedQuery], dict[str, Report]], max_rows: int) -> dict:
    """The schedule's source columns: its saved query's definition as of now, or its report's version."""
    queries, reports = sources
    if seed.kind == "query":
        query = queries[seed.source]
        return {
            "kind": "query",
            "source_query_id": query.id,
            "query_version": query.version,
            "query_definition": validate_definition(query.definition(), max_rows),
        }
    report = reports[seed.source]
    return {"kind": "report", "report_id": report.id, "report_version_seen": report.version}


def _recipients(seed: ScheduleSeed, people: dict[Login, Person]) -> list[ScheduleRecipient]:
    choices = [
        RecipientChoice(email=recipient) if isinstance(recipient, str) else RecipientChoice(people[recipient].id)
        for recipient in seed.recipients
    ]
    return [
        ScheduleRecipient(position=position, person_id=c.person_id, email=c.email, address_key=c.address_key)
        for position, c in enumerate(choices)
    ]


def _paused_by_import(schedule: Schedule, legacy_ref: str, now: datetime) -> None:
    """As a legacy import leaves a schedule (app/services/schedules/legacy_import.py): paused until
    the old delivery is switched off (here, since a day ago), without a message template."""
    schedule.legacy_ref = legacy_ref
    schedule.template_version_id = None
    schedule.status = ScheduleStatus.PAUSED
    schedule.pause_reason = PauseReason.LEGACY_IMPORT
    schedule.paused_at = now - timedelta(days=1)


def _add_failed_run(workspace: Workspace, schedule: Schedule, failure: FailedRun, now: datetime) -> None:
    """The schedule's last occurrence, an hour ago or more, as `failure` tells it."""
    timetable = Timetable.from_json(schedule.timetable, workspace.time_zone)
    occurrence = max(
        instant
        for instant in next_occurrences(timetable, now - timedelta(days=8), 8)
        if instant <= now - timedelta(hours=1)
    )
    schedule.last_occurrence_at = occurrence
    first_end = occurrence + timedelta(seconds=38)
    retry_start = first_end + timedelta(minutes=2)
    settled = retry_start + timedelta(seconds=3)
    final_code, final_detail = failure.final
    run = ScheduleRun(
        workspace_id=workspace.id,
        schedule_id=schedule.id,
        occurrence_at=occurrence,
        trigger=RunTrigger.TIMETABLE,
        skipped_occurrences=[],
        status=RunStatus.FAILED,
        attempt_count=2,
        created_at=occurrence,
        dispatched_at=occurrence + timedelta(seconds=1),
        started_at=occurrence + timedelta(seconds=2),
        completed_at=settled,
        failure_code=final_code,
        failure_detail=final_detail,
    )
    run.attempts = [
        ScheduleRunAttempt(
            number=number, started_at=started, ended_at=ended, outcome="failed", error_code=code, error_detail=detail
        )
        for number, started, ended, (code, detail) in (
            (1, occurrence + timedelta(seconds=2), first_end, failure.transient),
            (2, retry_start, settled, failure.final),
        )
    ]
    run.deliveries = [_delivery(recipient, failure, settled) for recipient in schedule.recipients]
    unsubscribes = [
        ScheduleUnsubscribe(schedule_id=schedule.id, address_key=key, created_at=occurrence - timedelta(days=3))
        for key in _unsubscribed_keys(failure)
    ]
    db.session.add_all([*unsubscribes, run])


def _delivery(recipient: ScheduleRecipient, failure: FailedRun, settled: datetime) -> RecipientDelivery:
    """A recipient's row of the failed run: skipped if they unsubscribed, else failed for want of a file."""
    delivery = RecipientDelivery(
        address_key=recipient.address_key,
        person_id=recipient.person_id,
        email=recipient.email,
        created_at=settled,
    )
    if recipient.address_key in _unsubscribed_keys(failure):
        delivery.status = DeliveryStatus.SKIPPED
        delivery.skip_reason = SkipReason.RECIPIENT_UNSUBSCRIBED
    else:
        delivery.status = DeliveryStatus.FAILED
        delivery.last_error = "Not sent: the run failed, so there was no file to link to."
    return delivery


def _unsubscribed_keys(failure: FailedRun) -> list[str]:
    return [RecipientChoice(email=address).address_key for address in failure.unsubscribed]
