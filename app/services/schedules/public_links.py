"""Following the links that open a schedule's file with no sign-in: an email's download and
unsubscribe links, and a webhook's download link.

A link names its delivery by a signed token (app/services/pages/public_link_tokens.py): an
email's its recipient delivery, a webhook's its destination delivery. Whether it still opens is
decided here, on every visit: the delivery still exists (changing or deleting it revokes the
link) and, for a recipient, was not skipped; its file succeeded and has not expired, the workspace
is live, and a person recipient is still a member of the workspace (INV-04), or the webhook
destination is still there and turned on. What failed is never told: the visitor is not signed
in, so the answer is only "found" (404 otherwise) or "gone" (410).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from app.domain.errors import NotVisible
from app.domain.people.access import current_context
from app.domain.schedules.destination_delivery import to_live_destination
from app.extensions import db
from app.models import ExportFile, Workspace
from app.models.export_destination import LINKED_KINDS, ExportDestination
from app.models.export_file import FileStatus
from app.models.schedule import DeliveryStatus, RecipientDelivery, Schedule, ScheduleRun, ScheduleUnsubscribe
from app.models.schedule_destination_delivery import DestinationDelivery
from app.services.files.file_library import open_download
from app.services.pages.public_link_tokens import nonce_from_token
from app.services.pages.stored_download import Download
from app.storage import ObjectMissing

PERSON_KEY_PREFIX = "person:"


class LinkInvalid(NotVisible):
    """The link names no delivery (`gone` False: unknown, forged, revoked) or no longer opens (`gone` True)."""

    def __init__(self, gone: bool, reason: str):
        super().__init__(reason)
        self.gone = gone
        self.reason = reason


@dataclass(frozen=True)
class LinkTarget:
    delivery: RecipientDelivery
    run: ScheduleRun
    schedule: Schedule


@dataclass(frozen=True)
class OpenedFile:
    """A download link's file, and the delivery row (a recipient's or a destination's) it counts on."""

    counted_on: type[RecipientDelivery] | type[DestinationDelivery]
    delivery_id: int
    download: Download


def _target(token: str, purpose: str) -> LinkTarget:
    nonce = nonce_from_token(token, purpose)
    if nonce is None:
        raise LinkInvalid(gone=False, reason="the token is forged, damaged or for another purpose")
    found = db.session.execute(
        select(RecipientDelivery, ScheduleRun, Schedule)
        .join(ScheduleRun, ScheduleRun.id == RecipientDelivery.run_id)
        .join(Schedule, Schedule.id == ScheduleRun.schedule_id)
        .where(RecipientDelivery.link_nonce == nonce)
    ).one_or_none()
    if found is None:
        raise LinkInvalid(gone=False, reason="no delivery has this nonce")
    return LinkTarget(*found)


def _workspace_is_live(workspace_id: int) -> bool:
    return db.session.scalar(select(Workspace.status).where(Workspace.id == workspace_id)) == "live"


def _still_addressed(target: LinkTarget) -> bool:
    """The workspace is live and, for a person recipient, that person is still its member (INV-04)."""
    if not _workspace_is_live(target.run.workspace_id):
        return False
    if not target.delivery.address_key.startswith(PERSON_KEY_PREFIX):
        return True
    person_id = target.delivery.person_id
    return person_id is not None and current_context(target.run.workspace_id, person_id) is not None


def open_delivered_file(token: str, now: datetime) -> OpenedFile:
    """The file a download link opens, an email's or a webhook's, and where to fetch it from;
    LinkInvalid otherwise. Storage errors other than a missing object are raised as the storage
    raises them."""
    destination_nonce = nonce_from_token(token, "destination_download")
    if destination_nonce is not None:
        return _announced_file(destination_nonce, now)
    target = _target(token, "download")
    if not _still_addressed(target):
        raise LinkInvalid(gone=True, reason="the recipient is no longer addressed by the workspace")
    if target.delivery.status == DeliveryStatus.SKIPPED:
        # Never mailed, so no link of it was given out. Run as each recipient such a row names no file,
        # and the run's own file is the owner's, made for the destinations: never a person's to open.
        raise LinkInvalid(gone=False, reason="the recipient was skipped and sent no link")
    # Run as each recipient, a row's link opens the file made with that person's access, never another.
    export_id = target.delivery.export_id or target.run.export_id
    download = _open_file(export_id, target.run.workspace_id, now)
    return OpenedFile(RecipientDelivery, target.delivery.id, download)


def _announced_file(nonce: str, now: datetime) -> OpenedFile:
    """A webhook's link: it opens the run's own file while the destination is there and turned on,
    so removing the destination revokes every link it was sent, and turning it off stops them
    opening until it is turned on again."""
    found = db.session.execute(
        select(DestinationDelivery.id, ScheduleRun.export_id, ScheduleRun.workspace_id)
        .join(ScheduleRun, ScheduleRun.id == DestinationDelivery.run_id)
        .join(ExportDestination, ExportDestination.id == DestinationDelivery.destination_id)
        .where(DestinationDelivery.link_nonce == nonce, ExportDestination.kind.in_(LINKED_KINDS))
    ).one_or_none()
    if found is None:
        raise LinkInvalid(gone=False, reason="no webhook delivery has this nonce")
    delivery_id, export_id, workspace_id = found
    if not _workspace_is_live(workspace_id):
        raise LinkInvalid(gone=True, reason="the workspace is not live")
    live = select(DestinationDelivery.id).where(DestinationDelivery.id == delivery_id, to_live_destination())
    if db.session.scalar(live) is None:
        raise LinkInvalid(gone=True, reason="the destination was removed or turned off")
    return OpenedFile(DestinationDelivery, delivery_id, _open_file(export_id, workspace_id, now))


def _open_file(export_id: int | None, workspace_id: int, now: datetime) -> Download:
    """The workspace's succeeded, unexpired file a link names; LinkInvalid otherwise."""
    export = db.session.get(ExportFile, export_id) if export_id is not None else None
    if export is None or export.workspace_id != workspace_id or export.status != FileStatus.SUCCEEDED:
        raise LinkInvalid(gone=False, reason="the run has no succeeded file")
    if export.is_expired(now):
        raise LinkInvalid(gone=True, reason="the file expired")
    try:
        return open_download(export, now)
    except ObjectMissing:
        raise LinkInvalid(gone=True, reason="the stored file is gone") from None


def count_download(opened: OpenedFile, now: datetime) -> None:
    """One more download on the link's delivery, counted in one UPDATE so concurrent ones all count."""
    table = opened.counted_on
    db.session.execute(
        update(table)
        .where(table.id == opened.delivery_id)
        .values(download_count=table.download_count + 1, last_downloaded_at=now)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def unsubscribe_target(token: str) -> LinkTarget:
    """The delivery an unsubscribe link names; LinkInvalid when it names none.

    Unsubscribing works as long as the link exists, whether or not its file has expired.
    """
    return _target(token, "unsubscribe")


def is_unsubscribed(target: LinkTarget) -> bool:
    """Whether the link's recipient already asked for no more messages of the schedule."""
    already = select(ScheduleUnsubscribe.id).where(
        ScheduleUnsubscribe.schedule_id == target.schedule.id,
        ScheduleUnsubscribe.address_key == target.delivery.address_key,
    )
    return db.session.scalar(already) is not None


def unsubscribe(target: LinkTarget) -> bool:
    """Record that the recipient wants no more messages of the schedule; doing it twice is the same.
    True when this call recorded it, False when it was recorded already."""
    if is_unsubscribed(target):
        return False
    db.session.add(ScheduleUnsubscribe(schedule_id=target.schedule.id, address_key=target.delivery.address_key))
    try:
        db.session.commit()
    except IntegrityError:
        # Two clicks at once: the other one recorded it, which is all that was asked.
        db.session.rollback()
        return False
    return True
