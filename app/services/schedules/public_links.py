"""Following the links in a schedule's emails, with no sign-in: the download and the unsubscribe.

A link names its recipient delivery by a signed token (app/services/pages/public_link_tokens.py). Whether
it still opens is decided here, on every visit: the delivery still exists (changing or deleting
it revokes the link) and was not skipped, its file succeeded and has not expired, the workspace
is live, and a person recipient is still a member of the workspace (INV-04). What failed is never
told: the visitor is not signed in, so the answer is only "found" (404 otherwise) or "gone" (410).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from app.domain.errors import NotVisible
from app.domain.people.access import current_context
from app.extensions import db
from app.models import ExportFile, Workspace
from app.models.export_file import FileStatus
from app.models.schedule import DeliveryStatus, RecipientDelivery, Schedule, ScheduleRun, ScheduleUnsubscribe
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


def _still_addressed(target: LinkTarget) -> bool:
    """The workspace is live and, for a person recipient, that person is still its member (INV-04)."""
    workspace_status = db.session.scalar(select(Workspace.status).where(Workspace.id == target.run.workspace_id))
    if workspace_status != "live":
        return False
    if not target.delivery.address_key.startswith(PERSON_KEY_PREFIX):
        return True
    person_id = target.delivery.person_id
    return person_id is not None and current_context(target.run.workspace_id, person_id) is not None


def open_delivered_file(token: str, now: datetime) -> tuple[RecipientDelivery, Download]:
    """The delivery a download link names and where to fetch its file from; LinkInvalid otherwise.

    Storage errors other than a missing object are raised as the storage raises them.
    """
    target = _target(token, "download")
    if not _still_addressed(target):
        raise LinkInvalid(gone=True, reason="the recipient is no longer addressed by the workspace")
    if target.delivery.status == DeliveryStatus.SKIPPED:
        # Never mailed, so no link of it was given out. Run as each recipient such a row names no file,
        # and the run's own file is the owner's, made for the destinations: never a person's to open.
        raise LinkInvalid(gone=False, reason="the recipient was skipped and sent no link")
    # Run as each recipient, a row's link opens the file made with that person's access, never another.
    export_id = target.delivery.export_id or target.run.export_id
    export = db.session.get(ExportFile, export_id) if export_id is not None else None
    if export is None or export.workspace_id != target.run.workspace_id or export.status != FileStatus.SUCCEEDED:
        raise LinkInvalid(gone=False, reason="the run has no succeeded file")
    if export.is_expired(now):
        raise LinkInvalid(gone=True, reason="the file expired")
    try:
        return target.delivery, open_download(export, now)
    except ObjectMissing:
        raise LinkInvalid(gone=True, reason="the stored file is gone") from None


def count_download(delivery_id: int, now: datetime) -> None:
    """One more download of the delivery's file, counted in one UPDATE so concurrent ones all count."""
    db.session.execute(
        update(RecipientDelivery)
        .where(RecipientDelivery.id == delivery_id)
        .values(download_count=RecipientDelivery.download_count + 1, last_downloaded_at=now)
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
