"""What a schedule's page shows of its time: the next occurrences of a timetable as typed, an
occurrence in the schedule's zone and the viewer's, and the run history (a page of runs with
their attempts, recipient rows and progress, every time in one zone), audit events and unsubscribes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import aliased

from app.domain.errors import ValidationError
from app.domain.schedules import send_conditions
from app.domain.timing.timetable import (
    OccurrenceInZones,
    Timetable,
    moment_label,
    next_occurrences,
    viewer_times,
)
from app.domain.values.text_rules import refuse_unstorable
from app.domain.values.time_zones import is_zone
from app.extensions import db
from app.models import AuditEvent, ExportFile, Person
from app.models.export_file import FileStatus
from app.models.package_delivery import FailureClass
from app.models.schedule import (
    ACTIVE_RUN_STATUSES,
    DeliveryStatus,
    RunStatus,
    Schedule,
    ScheduleRun,
    ScheduleUnsubscribe,
)
from app.models.schedule_destination_delivery import DestinationDelivery, DestinationDeliveryStatus
from app.models.types import utcnow
from app.services.pages.list_pages import ListRequest, ListSpec, Page, newest_first, page_of
from app.services.schedules.schedules import workspace_zone

# A page of a schedule's runs, newest first; the newest few show their attempts and recipients open.
RUN_LIST = ListSpec(
    "schedule_runs",
    sorts={"newest": newest_first(ScheduleRun.occurrence_at, ScheduleRun.id)},
    filters={},
    search_columns=(),
    page_size=10,
)
OPEN_RUNS = 3
# A copy to a destination still under way: the run history keeps polling while one is.
COPYING = (DestinationDeliveryStatus.PENDING, DestinationDeliveryStatus.DELIVERING)
DESTINATION_STATUS_WORDS: dict[str, str] = {
    DestinationDeliveryStatus.PENDING: "waiting",
    DestinationDeliveryStatus.DELIVERING: "copying",
    DestinationDeliveryStatus.DELIVERED: "delivered",
}
# The cookie viewer_zone.js keeps the browser's IANA time zone in.
VIEWER_ZONE_COOKIE = "viewer_zone"


@dataclass(frozen=True)
class Upcoming:
    description: str
    occurrences: list
    schedule_zone: str
    viewer_zone: str
    # What the send condition chosen means, in one sentence.
    sends: str


def upcoming(
    timetable_fields: dict, workspace_id: int, viewer_zone: str, send_condition: str = "", count: int = 5
) -> Upcoming:
    """The next `count` occurrences in the schedule's zone and the viewer's, and what the send
    condition means; ValidationError for a bad timetable."""
    refuse_unstorable([timetable_fields, viewer_zone], "timetable", "the timetable")
    default_zone = workspace_zone(workspace_id)
    timetable = Timetable.from_json(timetable_fields, default_zone)
    viewer = viewer_zone.strip() if isinstance(viewer_zone, str) and viewer_zone.strip() else default_zone
    try:
        shown = viewer_times(next_occurrences(timetable, utcnow(), count), timetable.zone, viewer)
    except ValidationError:
        viewer = default_zone
        shown = viewer_times(next_occurrences(timetable, utcnow(), count), timetable.zone, viewer)
    return Upcoming(timetable.describe(), shown, timetable.zone, viewer, send_conditions.meaning(send_condition))


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
class ShownTime:
    """A moment as a schedule page shows it: in the page's zone, the other zone on hover."""

    text: str
    other: str
    iso: str


@dataclass(frozen=True)
class PageClock:
    """Every time of a schedule page in one zone: the viewer's when their browser has said it
    (viewer_zone.js keeps it in a cookie), else the schedule's; each time names the other zone
    (the schedule's, or UTC when the page is in the schedule's) on hover."""

    zone: str
    other_zone: str
    is_viewers: bool

    def show(self, moment: datetime | None) -> ShownTime | None:
        if moment is None:
            return None
        instant = moment.astimezone(UTC)
        other = moment_label(instant.astimezone(ZoneInfo(self.other_zone)))
        return ShownTime(
            moment_label(instant.astimezone(ZoneInfo(self.zone))), f"{other} in {self.other_zone}", instant.isoformat()
        )

    def show_stamp(self, stamp: str) -> ShownTime | str:
        """An ISO 8601 time stamp stored as text (a coalesced occurrence); the text as stored if unreadable."""
        try:
            return self.show(datetime.fromisoformat(stamp)) or stamp
        except ValueError:
            return stamp


def page_clock(schedule: Schedule, viewer_zone: str | None) -> PageClock:
    schedule_zone = (schedule.timetable or {}).get("zone") or "UTC"
    if not is_zone(schedule_zone):
        schedule_zone = "UTC"
    if viewer_zone and is_zone(viewer_zone) and viewer_zone != schedule_zone:
        return PageClock(viewer_zone, schedule_zone, is_viewers=True)
    return PageClock(schedule_zone, "UTC", is_viewers=viewer_zone == schedule_zone)


@dataclass(frozen=True)
class RunProgress:
    """How far a running run is: the rows of its file, then its recipients sent."""

    percent: int | None
    text: str


@dataclass(frozen=True)
class RunHistory:
    page: Page
    runs: list[ScheduleRun]
    # Each run's number among the schedule's runs, oldest first: "Run 12".
    numbers: dict[int, int]
    people: dict[int, str]
    files: dict[int, ExportFile]
    clock: PageClock

    @property
    def active(self) -> bool:
        """A run of the page is queued or running, or one of its copies to a destination is under
        way or due now (an administrator's Retry); a copy waiting minutes for its backoff is not."""
        now = utcnow()
        return any(
            run.status in ACTIVE_RUN_STATUSES or any(_copying(d, now) for d in run.destination_deliveries)
            for run in self.runs
        )

    @staticmethod
    def destinations_failed(run: ScheduleRun) -> str | None:
        """Beside the run's status, which settles with its mail: how many of its copies to the
        destinations failed, so a run whose only deliveries failed never reads as a plain success."""
        failed = sum(1 for d in run.destination_deliveries if d.status == DestinationDeliveryStatus.FAILED)
        if not failed:
            return None
        chosen = len(run.destination_deliveries)
        return f"{failed} of {chosen} destination{'s' if chosen != 1 else ''} failed"

    @staticmethod
    def destination_status(delivery: DestinationDelivery) -> str:
        """A destination delivery's status in words: a failure says whether it is tried again."""
        if delivery.status == DestinationDeliveryStatus.FAILED:
            retried = delivery.failure_class == FailureClass.TRANSIENT and delivery.next_attempt_at is not None
            return "failed, waiting for a retry" if retried else "failed"
        return DESTINATION_STATUS_WORDS.get(delivery.status, delivery.status)

    def folded(self, position: int) -> bool:
        """True when the run at `position` (0 first) folds its attempts and recipients away: all
        but the newest few, so a long history stays short to scroll."""
        return not self.page.is_first or position >= OPEN_RUNS

    def progress(self, run: ScheduleRun) -> RunProgress | None:
        if run.status != RunStatus.RUNNING:
            return None
        to_send = [d for d in run.deliveries if d.status != DeliveryStatus.SKIPPED]
        if run.deliveries:
            sent = sum(1 for d in to_send if d.status == DeliveryStatus.SUBMITTED)
            percent = sent * 100 // len(to_send) if to_send else 100
            return RunProgress(percent, f"recipients sent {sent:,} of {len(to_send):,}")
        file = self.files.get(run.export_id) if run.export_id is not None else None
        if file is None or file.status != FileStatus.RUNNING:
            return RunProgress(None, "making the file")
        rows = f"{file.rows_written:,} rows written"
        return RunProgress(file.percent, rows if file.percent is None else f"{rows} · {file.percent}%")


def _copying(delivery: DestinationDelivery, now: datetime) -> bool:
    if delivery.status in COPYING:
        return True
    due = delivery.next_attempt_at
    return delivery.status == DestinationDeliveryStatus.FAILED and due is not None and due <= now


def run_history(schedule: Schedule, request: ListRequest, viewer_zone: str | None) -> RunHistory:
    """One page of the schedule's runs, newest first, with what their rows show."""
    earlier = aliased(ScheduleRun)
    number = (
        select(func.count())
        .where(
            earlier.schedule_id == ScheduleRun.schedule_id,
            tuple_(earlier.occurrence_at, earlier.id) <= tuple_(ScheduleRun.occurrence_at, ScheduleRun.id),
        )
        .scalar_subquery()
    )
    page = page_of(
        RUN_LIST,
        request,
        select(ScheduleRun, number).where(
            ScheduleRun.schedule_id == schedule.id, ScheduleRun.workspace_id == schedule.workspace_id
        ),
    )
    runs = [run for run, _ in page.rows]
    numbers = {run.id: count for run, count in page.rows}
    person_ids = {d.person_id for run in runs for d in run.deliveries if d.person_id is not None}
    people = (
        dict(db.session.execute(select(Person.id, Person.name).where(Person.id.in_(person_ids))).tuples().all())
        if person_ids
        else {}
    )
    export_ids = {run.export_id for run in runs if run.export_id is not None}
    files = (
        {f.id: f for f in db.session.scalars(select(ExportFile).where(ExportFile.id.in_(export_ids)))}
        if export_ids
        else {}
    )
    return RunHistory(page, runs, numbers, people, files, page_clock(schedule, viewer_zone))


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
