"""What a schedule's page shows of its time: the next occurrences of a timetable as typed, an
occurrence in the schedule's zone and the viewer's, and the run history with its attempts,
recipient rows, audit events and unsubscribes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from app.domain.errors import ValidationError
from app.domain.text_rules import refuse_unstorable
from app.domain.timetable import OccurrenceInZones, Timetable, next_occurrences, viewer_times
from app.extensions import db
from app.models import AuditEvent, Person, QueryExport
from app.models.schedule import (
    Schedule,
    ScheduleRun,
    ScheduleUnsubscribe,
)
from app.models.types import utcnow
from app.services.schedules import ACTIVE_RUN_STATUSES, workspace_zone

# The newest runs a schedule page shows, each with its attempts and recipient rows.
HISTORY_RUNS = 20


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
