"""A schedule run's file delivered to the destinations its schedule chose (DESIGN section 7).

Once the run's file is stored, `create_deliveries` makes one row per (run, destination) the
schedule chose and that is not removed (inserted ignoring duplicates, so a second attempt of the
run or a second press of Run now makes none twice; skipped when the run sends nothing). Each row
is its own background work (app/services/schedules/destination_work.py declares it to the work
engine): `run_delivery` makes one attempt, which copies the stored file, streamed, to

    <destination path>/<schedule slug>/<occurrence in UTC, 2026-12-07T0600Z>_<file name>

through the destination's store (an S3 object by multipart upload, whole or absent; an SFTP or
directory file written under a temporary name and renamed when whole), or, for a kind that
announces files (ANNOUNCING_KINDS), tells the destination a file is ready with its download link.
A failure is classified by the destinations' one rule (`classify_error`): transient ones are tried
again after the delay of the copy policy every destination follows (`COPY_TO_A_DESTINATION`), permanent
ones stop, in words, until an administrator's Retry (`retry`). What every delivery to a
destination shares (the policy, the values of a started or failed attempt) is
app/domain/delivery_attempts.py.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime

from sqlalchemy import select

from app.destinations import (
    DeliveryFailure,
    FileReady,
    announce,
    classify_error,
    open_destination,
)
from app.domain import delivery_attempts
from app.domain.errors import NotVisible, TransitionRefused
from app.domain.schedules import destination_delivery
from app.domain.values.text_rules import ascii_slug
from app.extensions import db
from app.models import ExportFile
from app.models.export_destination import ANNOUNCING_KINDS, ExportDestination
from app.models.export_file import FileStatus
from app.models.package_delivery import FailureClass
from app.models.schedule import Schedule, ScheduleDestination, ScheduleRun
from app.models.schedule_destination_delivery import DestinationDelivery, DestinationDeliveryStatus
from app.models.types import Moment, utcnow
from app.services.accounts import audit
from app.services.pages.public_link_tokens import download_path, public_link
from app.services.work import leases
from app.storage import check_key, get_storage
from app.storage.base import ObjectMissing

log = logging.getLogger(__name__)

WORKER_STOPPED = "worker_stopped"
FILE_GONE = "file_gone"
# Where an announced file "went": the destination was told, with a link; it holds no file.
ANNOUNCED = "announced, with a link to the file"
_SETTLED = (DestinationDeliveryStatus.DELIVERED,)


def schedule_slug(schedule: Schedule) -> str:
    """The schedule's folder at a destination: its name as a slug, then its id, since two names
    may make one slug ("Hours!" and "Hours?")."""
    return f"{ascii_slug(schedule.name, limit=60, fallback='schedule')}-{schedule.id}"


def target_key(schedule: Schedule, run: ScheduleRun, export: ExportFile) -> str:
    """`<schedule slug>/<occurrence in UTC>_<file name>`: stable for the run, so every attempt
    writes the same name, and saying what it holds. Checked with the stores' key rule."""
    occurrence = run.occurrence_at.astimezone(UTC).strftime("%Y-%m-%dT%H%MZ")
    return check_key(f"{schedule_slug(schedule)}/{occurrence}_{export.file_name}")


def chosen_destinations(schedule_id: int) -> list[ExportDestination]:
    """The destinations the schedule chose that are not removed, in the order chosen."""
    return list(
        db.session.scalars(
            select(ExportDestination)
            .join(ScheduleDestination, ScheduleDestination.destination_id == ExportDestination.id)
            .where(ScheduleDestination.schedule_id == schedule_id, ExportDestination.removed_at.is_(None))
            .order_by(ScheduleDestination.position, ScheduleDestination.id)
        )
    )


def create_deliveries(run: ScheduleRun, schedule: Schedule, export: ExportFile) -> list[int]:
    """The run's delivery to each destination the schedule chose, made once; returns the ids of
    the run's deliveries that wait for an attempt. Committed."""
    destinations = chosen_destinations(run.schedule_id)
    if destinations:
        key = target_key(schedule, run, export)
        for destination in destinations:
            destination_delivery.create(
                workspace_id=run.workspace_id, run_id=run.id, destination_id=destination.id, target_key=key
            )
        db.session.commit()
    return list(
        db.session.scalars(
            select(DestinationDelivery.id)
            .where(
                DestinationDelivery.run_id == run.id,
                DestinationDelivery.status == DestinationDeliveryStatus.PENDING,
                DestinationDelivery.job_id.is_(None),
            )
            .order_by(DestinationDelivery.id)
        )
    )


# One attempt


def run_delivery(delivery_id: int, now: datetime | None = None) -> str:
    """One attempt at the delivery; returns one word describing the outcome, for logs."""
    delivery = db.session.get(DestinationDelivery, delivery_id, populate_existing=True)
    if delivery is None:
        return "missing"
    if delivery.status in _SETTLED:
        return f"already_{delivery.status}"
    try:
        attempt = destination_delivery.start(delivery_id, leases.holder_name(), leases.lease_expiry(), now=now)
    except TransitionRefused:
        # Another worker has it, its retry time has not come, or its destination is disabled.
        return "not_due"

    def renew(lease_expires_at: Moment) -> None:
        destination_delivery.renew_lease(delivery_id, attempt, lease_expires_at)

    with leases.renewed_while_running(renew, f"schedule destination delivery {delivery_id}"):
        try:
            location = _deliver(delivery_id, lambda: renew(leases.lease_expiry()))
        except TransitionRefused:
            db.session.rollback()
            log.warning("schedule destination delivery %s attempt %s is stale: it stopped", delivery_id, attempt)
            return "stale"
        except Exception as exc:  # every failure is classified and recorded on the row
            failure = _classified(exc)
            if failure.code == "unexpected_error":
                log.exception("schedule destination delivery %s attempt %s failed unexpectedly", delivery_id, attempt)
            else:
                log.warning(
                    "schedule destination delivery %s attempt %s failed: %s", delivery_id, attempt, failure.summary
                )
            db.session.rollback()
            return record_failure(delivery_id, attempt, failure)
    try:
        destination_delivery.delivered(delivery_id, attempt, location)
    except TransitionRefused:
        return "stale"
    return "delivered"


class _FileGone(Exception):
    """The run's file expired or left the product's storage: nothing is left to deliver.

    Outside DomainError: a signal inside the job, recorded on the delivery as a permanent failure."""


def _classified(exc: BaseException) -> DeliveryFailure:
    if isinstance(exc, _FileGone | ObjectMissing):
        return DeliveryFailure(
            FailureClass.PERMANENT,
            FILE_GONE,
            "The run's file has expired or is no longer in Rhythm's storage, so it cannot be delivered; "
            "the schedule's next run delivers its own file.",
        )
    return classify_error(exc)


def _deliver(delivery_id: int, still_current) -> str:
    """Copy (or announce) the run's file; returns where it went, for people to read. No
    transaction stays open while the destination answers."""
    delivery = db.session.get_one(DestinationDelivery, delivery_id, populate_existing=True)
    run = db.session.get_one(ScheduleRun, delivery.run_id)
    schedule = db.session.get_one(Schedule, run.schedule_id)
    destination = db.session.get_one(ExportDestination, delivery.destination_id)
    export = db.session.get(ExportFile, run.export_id) if run.export_id is not None else None
    if export is None or export.status != FileStatus.SUCCEEDED or export.is_expired(utcnow()):
        raise _FileGone()
    if destination.kind in ANNOUNCING_KINDS:
        file_ready = _file_ready(delivery, run, schedule, export)
        db.session.rollback()
        announce(destination, file_ready)
        return ANNOUNCED
    storage_key, target = export.storage_key, delivery.target_key
    store = open_destination(destination)
    db.session.rollback()
    try:
        still_current()
        store.put_stream(target, get_storage().read_chunks(storage_key))
    finally:
        store.close()
    return store.location(target)


def _file_ready(delivery: DestinationDelivery, run: ScheduleRun, schedule: Schedule, export: ExportFile) -> FileReady:
    """The announcement of the run's file: its facts, its checksum (read from storage, streamed)
    and the link to download it until the file expires. A webhook's link opens with no sign-in
    (its receiver is a machine) while the destination is there and turned on, and is the same on
    every attempt; a Slack channel's opens only for the people who may read the schedule's files
    once signed in, since a channel's members can pass a link on."""
    digest = hashlib.sha256()
    for chunk in get_storage().read_chunks(export.storage_key):
        digest.update(chunk)
    if delivery.carries_link:
        path = download_path(delivery.link_nonce, "destination_download")
    else:
        path = f"/w/{run.workspace_id}/files/{export.id}/download"
    return FileReady(
        message_id=f"run-{run.id}-destination-{delivery.destination_id}",
        schedule_name=schedule.name,
        schedule_slug=schedule_slug(schedule),
        run_id=run.id,
        occurrence=run.occurrence_at.astimezone(UTC),
        file_name=export.file_name,
        format=export.format,
        rows=export.row_count or 0,
        size_bytes=export.size_bytes or 0,
        sha256=digest.hexdigest(),
        download_url=public_link(path),
        link_expires_at=export.expires_at or utcnow(),
    )


def record_failure(
    delivery_id: int,
    attempt: int,
    failure: DeliveryFailure,
    now: datetime | None = None,
    lease_lapsed_before: datetime | None = None,
    retry_at: datetime | None = None,
) -> str:
    """Fail the attempt: a transient failure waits for its retry (at `retry_at` when the engine
    chose it, else after the copy policy's delay), or after the last attempt becomes the permanent
    `retries_exhausted`."""
    now = now or utcnow()
    failure_class, code, summary, next_attempt_at = delivery_attempts.after_failure(
        failure.failure_class, failure.code, failure.summary, attempt, now, retry_at
    )
    try:
        destination_delivery.failed(
            delivery_id,
            attempt,
            (failure_class, code, summary),
            retry_at=next_attempt_at,
            lease_lapsed_before=lease_lapsed_before,
            now=now,
        )
    except TransitionRefused:
        return "stale"
    return "failed" if failure_class == FailureClass.PERMANENT else "retry_later"


# An administrator's Retry


def retry(schedule_id: int, delivery_id: int, seen_attempt: int, actor_id: int) -> DestinationDelivery:
    """Make a failed delivery of one of the schedule's runs due now, as the administrator saw it,
    audited in the same transaction. NotVisible for another schedule's; TransitionRefused (a
    sentence) when it moved on or its destination is disabled. The caller dispatches it."""
    delivery = db.session.scalar(
        select(DestinationDelivery)
        .join(ScheduleRun, ScheduleRun.id == DestinationDelivery.run_id)
        .where(DestinationDelivery.id == delivery_id, ScheduleRun.schedule_id == schedule_id)
    )
    if delivery is None:
        raise NotVisible("no such destination delivery of this schedule")
    try:
        destination_delivery.retry_now(delivery_id, seen_attempt)
    except TransitionRefused:
        raise TransitionRefused(
            "This delivery cannot be retried now: it is already being retried or has moved on since the page "
            "was shown, or its destination is disabled or removed. Reload the page to see where it stands."
        ) from None
    audit.record(
        workspace_id=delivery.workspace_id,
        actor_id=actor_id,
        action="schedule_destination_delivery.retried",
        subject_type="schedule_run",
        subject_id=delivery.run_id,
        details={
            "delivery_id": delivery_id,
            "destination_id": delivery.destination_id,
            "attempts_before": seen_attempt,
        },
    )
    db.session.commit()
    return delivery
