"""A run's recipient deliveries: one row per recipient, the skip decisions, and the messages.

Rows are inserted once per (run, recipient) (the unique index), so a run processed twice finds
the rows the first pass made; whether the run sends at all was decided before, by the schedule's
send condition (app/services/schedules/send_decision.py). Who is skipped is decided when the row
is made, from the database as it is then: a person no longer a member, an address that is no
member's whose schedule owner lost the external-recipients grant, a recipient who unsubscribed.
Whether the file is attached is decided then too, from the schedule's choice, the workspace's
attachment policy and the stored file's size, and kept on the row, so every attempt sends the
same message. Every other row is claimed,
sent with the Message-ID fixed by its id, and marked submitted with the server's submission id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select

from app.communications import Attachment, Link, MessageText, OutgoingMessage, Recipient, get_mailer, message_id_for
from app.communications.errors import InvalidAddress, MailRefused, MailTemporarilyUnavailable
from app.domain.errors import TransitionRefused
from app.domain.people.access import RequesterContext
from app.domain.schedules import attachment_rules, recipient_delivery, send_conditions
from app.domain.timing.timetable import Timetable, wall_clock_label
from app.domain.values.sizes import size_label
from app.extensions import db, insert_ignoring_duplicates
from app.models import ExportFile, Membership, Person
from app.models.schedule import (
    CommunicationTemplateVersion,
    DeliveryStatus,
    RecipientDelivery,
    Schedule,
    ScheduleRecipient,
    ScheduleRun,
    ScheduleUnsubscribe,
    SendCondition,
    SkipReason,
)
from app.models.types import database_now
from app.services.files.file_library import MIME_TYPES
from app.services.pages.public_link_tokens import download_path, link_token, public_link
from app.services.schedules import attachment_policy
from app.storage import get_storage

log = logging.getLogger(__name__)

EXTERNAL_RECIPIENTS_GRANT = "schedules.external_recipients"
MESSAGE_KIND = "schedule-delivery"


def delivery_paths(link_nonce: str) -> tuple[str, str]:
    """The download and unsubscribe paths of a delivery's links: `/d/<token>` and `/u/<token>`,
    the public pages' routes (app/blueprints/public_links)."""
    return download_path(link_nonce, "download"), f"/u/{link_token(link_nonce, 'unsubscribe')}"


def create_deliveries(
    run: ScheduleRun,
    schedule: Schedule,
    owner: RequesterContext,
    export: ExportFile | None,
    recipients: Sequence[ScheduleRecipient] | None = None,
    skip: SkipReason | None = None,
    own_file: bool = False,
) -> None:
    """Insert the run's delivery rows that do not exist yet, skipped ones with their reason, each
    with the attachment decision for its message. Committed.

    Run as each recipient, it is called once per access's file with that file's `recipients`
    (`own_file`: their links open `export`, not the run's file), and for the recipients who get no
    file (`export` None; `skip` the reason of those who lost access)."""
    carries_file = schedule.attach_file and _links_file(schedule) and export is not None
    limit_mb = attachment_policy.limit_mb(schedule.workspace_id) if carries_file else None
    # The stored size decides: an over-limit file is never read.
    attached = None if limit_mb is None or export is None else attachment_rules.fits(export.size_bytes or 0, limit_mb)
    member_rows = db.session.execute(
        select(Membership.person_id, Person.email)
        .join(Person, Person.id == Membership.person_id)
        .where(Membership.workspace_id == schedule.workspace_id)
    ).all()
    members = {row.person_id for row in member_rows}
    member_addresses = {row.email.lower() for row in member_rows}
    unsubscribed = set(
        db.session.scalars(
            select(ScheduleUnsubscribe.address_key).where(ScheduleUnsubscribe.schedule_id == schedule.id)
        )
    )
    rows = []
    for recipient in schedule.recipients if recipients is None else recipients:
        reason = _skip_reason(recipient, members, member_addresses, unsubscribed, owner) or skip
        rows.append(
            {
                "run_id": run.id,
                "address_key": recipient.address_key,
                "person_id": recipient.person_id,
                "email": recipient.email,
                "status": DeliveryStatus.SKIPPED if reason else DeliveryStatus.PENDING,
                "skip_reason": reason,
                "attached": None if reason else attached,
                "attachment_limit_mb": None if reason else limit_mb,
                "export_id": export.id if own_file and export is not None else None,
                "created_at": database_now(),
            }
        )
    if rows:
        # One statement for the run's recipients.
        db.session.execute(
            insert_ignoring_duplicates(RecipientDelivery.__table__, ["run_id", "address_key"]).values(rows)
        )
    db.session.commit()


def _skip_reason(
    recipient,
    members: set[int],
    member_addresses: set[str],
    unsubscribed: set[str],
    owner: RequesterContext,
) -> SkipReason | None:
    if recipient.address_key in unsubscribed:
        return SkipReason.RECIPIENT_UNSUBSCRIBED
    if recipient.person_id is not None and recipient.person_id not in members:
        return SkipReason.RECIPIENT_REMOVED
    external = recipient.email is not None and recipient.email.lower() not in member_addresses
    if external and not owner.has_grant(EXTERNAL_RECIPIENTS_GRANT):
        return SkipReason.RECIPIENT_NOT_ALLOWED
    return None


@dataclass(frozen=True)
class SendOutcome:
    """What sending a run's pending rows left: rows still waiting for the server, and rows this
    attempt could not send because it no longer holds the run (a newer attempt does, or its lease
    lapsed)."""

    waiting: int
    held_elsewhere: int


def send_pending(
    run: ScheduleRun,
    schedule: Schedule,
    export: ExportFile,
    attempt: int,
    retry_at: Callable[[], datetime],
    own_file: bool = False,
) -> SendOutcome:
    """Claim for run attempt `attempt` and send every pending row of the run (`own_file`: only the
    rows whose links open `export`, one access's file of a run as each recipient). A temporary
    refusal frees the row for the next attempt (the run decides whether there is one), to be tried
    again at `retry_at()`; a permanent refusal fails it. A row is handed to the mailer only after
    `confirm_claim` found it still this attempt's."""
    mailer = get_mailer()
    content = _content(schedule, run, export)
    rows = db.session.execute(
        select(
            RecipientDelivery.id,
            RecipientDelivery.created_at,
            RecipientDelivery.person_id,
            RecipientDelivery.email,
            RecipientDelivery.link_nonce,
            RecipientDelivery.attached,
            RecipientDelivery.attachment_limit_mb,
        )
        .where(
            RecipientDelivery.run_id == run.id,
            RecipientDelivery.status == DeliveryStatus.PENDING,
            *([RecipientDelivery.export_id == export.id] if own_file else []),
        )
        .order_by(RecipientDelivery.id)
    ).all()
    db.session.rollback()
    # Read once for the run, and only when a row's message carries it.
    attachment = _attachment(export) if any(row.attached for row in rows) else None
    waiting = held = 0
    for delivery_id, created_at, person_id, email, nonce, attached, limit_mb in rows:
        try:
            recipient_delivery.claim(delivery_id, attempt)
        except TransitionRefused:
            held += 1
            continue
        address = _address(person_id, email)
        if address is None:
            recipient_delivery.fail(delivery_id, attempt, "The recipient has no email address any more.")
            continue
        message = content.message(
            address,
            message_id_for(MESSAGE_KIND, delivery_id, created_at, mailer.domain),
            nonce,
            _carried(attached, limit_mb, export, attachment),
        )
        try:
            recipient_delivery.confirm_claim(delivery_id, attempt)
        except TransitionRefused:
            log.warning(
                "schedule run %s attempt %s: delivery %s was taken over; not sent", run.id, attempt, delivery_id
            )
            held += 1
            continue
        try:
            submission_id = mailer.send(message)
        except MailTemporarilyUnavailable as exc:
            recipient_delivery.release_for_retry(delivery_id, attempt, exc.summary, retry_at())
            waiting += 1
            continue
        except InvalidAddress as exc:
            # Refused here, before any server saw it: the record must not blame the mail server.
            recipient_delivery.fail(
                delivery_id, attempt, f"Not sent: this product's address check refused it. {exc.summary}"
            )
            continue
        except MailRefused as exc:
            recipient_delivery.fail(delivery_id, attempt, f"The mail server refused the message: {exc.summary}")
            continue
        recipient_delivery.submit(delivery_id, attempt, submission_id)
        log.info("schedule run %s: delivery %s submitted as %s", run.id, delivery_id, submission_id)
    return SendOutcome(waiting, held)


def _address(person_id: int | None, email: str | None) -> Recipient | None:
    if email is not None:
        return Recipient(email)
    person = db.session.get(Person, person_id) if person_id is not None else None
    return Recipient(person.email, person.name) if person is not None else None


def _attachment(export: ExportFile) -> Attachment:
    """The stored file as the message carries it, read through the storage abstraction."""
    data = b"".join(get_storage().read_chunks(export.storage_key))
    return Attachment(export.file_name, MIME_TYPES[export.format], data)


@dataclass(frozen=True)
class Carried:
    """What one row's message carries besides the link: the attachment, or why there is none."""

    attachment: Attachment | None = None
    sentence: str | None = None


def _carried(attached: bool | None, limit_mb: int | None, export: ExportFile, attachment: Attachment | None) -> Carried:
    if attached:
        return Carried(attachment=attachment)
    if attached is False and limit_mb is not None:
        return Carried(sentence=attachment_rules.over_limit_sentence(export.size_bytes or 0, limit_mb))
    return Carried()


@dataclass(frozen=True)
class MessageContent(MessageText):
    """The parts of a run's message that are the same for every recipient."""

    footer: str
    # False for an "only when none" alert, which says the file is empty rather than linking it.
    links_file: bool = True

    def message(self, to: Recipient, message_id: str, link_nonce: str, carried: Carried = Carried()) -> OutgoingMessage:
        download, unsubscribe = delivery_paths(link_nonce)
        return OutgoingMessage(
            to=to,
            subject=self.subject,
            message_id=message_id,
            heading=self.heading,
            paragraphs=self.paragraphs if carried.sentence is None else (*self.paragraphs, carried.sentence),
            attachments=() if carried.attachment is None else (carried.attachment,),
            facts=self.facts,
            link=Link("Download the file", public_link(download)) if self.links_file else None,
            footer=self.footer,
            unsubscribe_url=public_link(unsubscribe),
        )


def _content(schedule: Schedule, run: ScheduleRun, export: ExportFile) -> MessageContent:
    template = (
        db.session.get(CommunicationTemplateVersion, schedule.template_version_id)
        if schedule.template_version_id is not None
        else None
    )
    zone = Timetable.from_json(schedule.timetable, "UTC").zone
    occurrence = wall_clock_label(run.occurrence_at.astimezone(ZoneInfo(zone)))
    paragraphs = [text for text in (template.body if template else "", schedule.custom_message) if text.strip()]
    facts = [("Schedule", schedule.name), ("Occurrence", occurrence), ("Rows", f"{export.row_count or 0:,}")]
    links_file = _links_file(schedule)
    if schedule.send_condition == SendCondition.NO_ROWS:
        paragraphs.append(send_conditions.NO_ROWS_ALERT if not links_file else send_conditions.NO_ROWS_ALERT_WITH_FILE)
    if links_file:
        facts += [("Size", size_label(export.size_bytes or 0)), ("File", export.file_name)]
    if export.expires_at is not None and links_file:
        facts.append(("Link valid until", export.expires_at.strftime("%d %b %Y")))
    return MessageContent(
        subject=template.subject if template else f"{schedule.name}: {occurrence}",
        heading=schedule.name,
        paragraphs=tuple(paragraphs),
        facts=tuple(facts),
        footer=f"You receive this because you are a recipient of the schedule “{schedule.name}”.",
        links_file=links_file,
    )


def _links_file(schedule: Schedule) -> bool:
    """False for an "only when none" alert, which carries the empty file only when the schedule asks."""
    return schedule.send_condition != SendCondition.NO_ROWS or schedule.alert_with_file


def fail_pending(run_id: int, attempt: int, error: str) -> None:
    """A run that settled at `attempt` without sending: its rows still pending are failed with the reason."""
    for delivery_id in db.session.scalars(
        select(RecipientDelivery.id).where(
            RecipientDelivery.run_id == run_id, RecipientDelivery.status == DeliveryStatus.PENDING
        )
    ).all():
        try:
            recipient_delivery.fail_unsent(delivery_id, attempt, error)
        except TransitionRefused:
            continue
