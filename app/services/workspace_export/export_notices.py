"""Workspace-export notices by email: package ready, execution failed, delivery failed for good,
package deleted early by Rhythm staff.

`notify` records one notice per (subject, kind, person) for the workspace's administrators and
the notification people of the execution's settings snapshot (the settings as admitted: an edit
after admission does not change who hears about that execution, its package or its deliveries)
who are still members, with an insert that ignores rows already there (so a retried step
notifies nobody twice), then sends the subject's pending notices in its own process. Each send
(`send`) is an attempt that starts the notice under a lease, and asks again: a person who lost
their place meanwhile (removed, or no longer an administrator and not named) is not mailed, and
the notice fails saying so. A mail server that cannot take a message now leaves its notice pending
until its retry time (the waits of all mail to a person, MAIL_TO_A_PERSON); notices are a kind of
the work engine (app/services/workspace_export/notice_work.py), which dispatches a notice's retry
once due, and a notice its recording process left unsent, to the job that calls `send`; it also
hands a notice whose sender died to a new attempt. Each message's Message-ID is fixed by its
notice's id, so the same notice is recognisable however many attempts it took.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select

from app.communications import Link, MessageText, OutgoingMessage, Recipient, get_mailer, message_id_for
from app.communications.errors import InvalidAddress, MailRefused, MailTemporarilyUnavailable
from app.domain.errors import TransitionRefused
from app.domain.people.access import RequesterContext, current_context
from app.domain.timing.retry_policy import MAIL_TO_A_PERSON
from app.domain.values.sizes import size_label
from app.domain.workspace_export import export_notice
from app.extensions import db, insert_ignoring_duplicates
from app.models import Membership, Person, Workspace
from app.models.export_destination import ExportDestination
from app.models.export_execution import ExportExecution
from app.models.export_notice import ExportNotice, NoticeKind, NoticeStatus
from app.models.export_package import ExportPackage
from app.models.package_delivery import ExportDelivery
from app.models.types import Moment, database_clock, utcnow
from app.services.pages.public_link_tokens import public_link
from app.services.work import leases
from app.services.workspace_export.package_retention import deletion_of

log = logging.getLogger(__name__)

MESSAGE_KIND = "export-notice"
NO_LONGER_A_RECIPIENT = (
    "Not sent: the person is no longer an administrator of the workspace, nor a member named in this"
    " export's notification people."
)
SUBJECT_TYPES = {
    NoticeKind.PACKAGE_READY: "package",
    NoticeKind.EXECUTION_FAILED: "execution",
    NoticeKind.DELIVERY_FAILED: "delivery",
    NoticeKind.PACKAGE_DELETED: "package",
}


def recipients(subject_type: str, subject_id: int, workspace_id: int) -> list[int]:
    """Who hears about this subject now: the workspace's administrators, plus the notification
    people of its execution's settings snapshot (the settings as that execution was admitted;
    later edits do not change who hears about it), each only while a member of the workspace."""
    members = dict(
        db.session.execute(select(Membership.person_id, Membership.role).where(Membership.workspace_id == workspace_id))
        .tuples()
        .all()
    )
    chosen = {person_id for person_id, role in members.items() if role == "admin"}
    chosen |= {person_id for person_id in _snapshot_people(subject_type, subject_id) if person_id in members}
    return sorted(chosen)


def _snapshot_people(subject_type: str, subject_id: int) -> list[int]:
    """The notification people in the settings snapshot of the execution the subject comes from."""
    query = select(ExportExecution.settings_snapshot)
    if subject_type == "execution":
        query = query.where(ExportExecution.id == subject_id)
    else:
        query = query.join(ExportPackage, ExportPackage.execution_id == ExportExecution.id)
        if subject_type == "package":
            query = query.where(ExportPackage.id == subject_id)
        else:
            query = query.join(ExportDelivery, ExportDelivery.package_id == ExportPackage.id).where(
                ExportDelivery.id == subject_id
            )
    snapshot = db.session.scalar(query) or {}
    return list(snapshot.get("notify_person_ids", []))


def notify(kind: NoticeKind, subject_type: str, subject_id: int, workspace_id: int) -> int:
    """Record the notices of this subject and kind (once per person, ever), then send the pending
    ones. Returns how many were sent now."""
    kind = NoticeKind(kind)
    if SUBJECT_TYPES[kind] != subject_type:
        raise ValueError(f"a {kind} notice is about a {SUBJECT_TYPES[kind]}, not a {subject_type}")
    now = utcnow()
    for person_id in recipients(subject_type, subject_id, workspace_id):
        db.session.execute(
            insert_ignoring_duplicates(
                ExportNotice.__table__, ["subject_type", "subject_id", "kind", "person_id"]
            ).values(
                workspace_id=workspace_id,
                subject_type=subject_type,
                subject_id=subject_id,
                kind=kind,
                person_id=person_id,
                status=NoticeStatus.PENDING,
                attempt_count=0,
                created_at=now,
            )
        )
    db.session.commit()
    due = db.session.scalars(
        select(ExportNotice.id).where(
            ExportNotice.subject_type == subject_type,
            ExportNotice.subject_id == subject_id,
            ExportNotice.kind == kind,
            ExportNotice.status == NoticeStatus.PENDING,
        )
    ).all()
    db.session.rollback()
    return _send_each(due)


def notify_execution_failed(execution_id: int, workspace_id: int) -> None:
    """The EXECUTION_FAILED notice, after a failure was committed, whoever settled it (the attempt
    itself, the watchdog giving it up, staff marking it failed): every failure is told the same
    way. Never raises: a notice that could not be recorded or sent is logged, and recorded ones
    are dispatched again by the work engine."""
    try:
        notify(NoticeKind.EXECUTION_FAILED, "execution", execution_id, workspace_id)
    except Exception:
        db.session.rollback()
        log.exception("workspace export %s: the failure notice could not be sent", execution_id)


def send(notice_id: int) -> str:
    """One attempt at sending the notice, as the attempt that starts it (and holds it under a
    lease while the mail server answers): the job the work engine dispatches, and the sending
    `notify` does at once. Returns one word for the log: sent, retry_later, failed, not_due (sent,
    failed, its retry not due, or another attempt has it) or superseded."""
    try:
        attempt = export_notice.start(notice_id, leases.holder_name(), leases.lease_expiry())
    except TransitionRefused:
        return "not_due"

    def renew(lease_expires_at: Moment) -> None:
        export_notice.renew_lease(notice_id, attempt, lease_expires_at)

    with leases.renewed_while_running(renew, f"export notice {notice_id}"):
        try:
            return _attempt(notice_id, attempt)
        except TransitionRefused:
            log.info("export notice %s attempt %s was superseded", notice_id, attempt)
            return "superseded"


def _send_each(notice_ids: Sequence[int]) -> int:
    return sum(send(notice_id) == "sent" for notice_id in notice_ids)


def _attempt(notice_id: int, attempt: int) -> str:
    notice = db.session.get_one(ExportNotice, notice_id, populate_existing=True)
    try:
        content = _content(notice)
    except _SubjectGone:
        export_notice.fail(notice_id, attempt, "What this notice was about no longer exists.")
        return "failed"
    if notice.person_id not in recipients(notice.subject_type, notice.subject_id, notice.workspace_id):
        # A retry may come hours after the notice was recorded: access lost meanwhile counts.
        export_notice.fail(notice_id, attempt, NO_LONGER_A_RECIPIENT)
        return "failed"
    person = db.session.get_one(Person, notice.person_id)
    access = current_context(notice.workspace_id, person.id)
    if access is None or not access.is_admin:
        # The package and export pages are the administrators': anyone else is sent to the
        # notice's own summary, which they may open.
        content = replace(content, link=_summary_link(notice))
    mailer = get_mailer()
    message = content.message(
        Recipient(person.email, person.name), message_id_for(MESSAGE_KIND, notice_id, notice.created_at, mailer.domain)
    )
    # The last guarded update before the mail leaves (committed, so no transaction stays open while
    # the mail server answers): an attempt superseded while it prepared the message (its lease
    # lapsed and the engine moved the notice on) stops here and mails nobody.
    export_notice.renew_lease(notice_id, attempt, leases.lease_expiry())
    try:
        submission_id = mailer.send(message)
    except MailTemporarilyUnavailable as exc:
        log.warning("export notice %s: the mail server could not take it (%s)", notice_id, exc.summary)
        if MAIL_TO_A_PERSON.exhausted(attempt):
            export_notice.fail(notice_id, attempt, f"Given up after {attempt} tries; the last: {exc.summary}")
            return "failed"
        retry_at = database_clock() + MAIL_TO_A_PERSON.delay_after(attempt)
        export_notice.retry_later(notice_id, attempt, exc.summary, retry_at)
        return "retry_later"
    except InvalidAddress as exc:
        # Refused here, before any server saw it: the record must not blame the mail server.
        export_notice.fail(notice_id, attempt, f"Not sent: this product's address check refused it. {exc.summary}")
        log.warning("export notice %s not sent: %s", notice_id, exc.summary)
        return "failed"
    except MailRefused as exc:
        export_notice.fail(notice_id, attempt, f"The mail server refused the message: {exc.summary}")
        log.warning("export notice %s refused: %s", notice_id, exc.summary)
        return "failed"
    export_notice.mark_sent(notice_id, attempt, submission_id)
    log.info("export notice %s sent as %s", notice_id, submission_id)
    return "sent"


class _SubjectGone(Exception):
    """The execution, package or delivery the notice is about was deleted.

    Outside DomainError: a signal inside the sender, which fails the notice with a sentence."""


@dataclass(frozen=True)
class NoticeContent(MessageText):
    """A notice's message to each administrator and notification person."""

    link: Link

    def message(self, to: Recipient, message_id: str) -> OutgoingMessage:
        return OutgoingMessage(
            to=to,
            subject=self.subject,
            message_id=message_id,
            heading=self.heading,
            paragraphs=self.paragraphs,
            facts=self.facts,
            link=self.link,
            footer="You receive this as an administrator of the workspace or one of its export notification people.",
        )


def _summary_link(notice: ExportNotice) -> Link:
    return Link("Open the summary", public_link(f"/w/{notice.workspace_id}/export/notices/{notice.id}"))


def notice_summary(access: RequesterContext, notice_id: int) -> NoticeContent | None:
    """What a notice said, for the person it was sent to while they still hear about its subject
    (a notification person who is not an administrator opens this, not the package's page);
    None for anyone else, or once what it was about is gone."""
    notice = db.session.scalar(
        select(ExportNotice).where(
            ExportNotice.id == notice_id,
            ExportNotice.workspace_id == access.workspace_id,
            ExportNotice.person_id == access.person_id,
        )
    )
    if notice is None or access.person_id not in recipients(
        notice.subject_type, notice.subject_id, notice.workspace_id
    ):
        return None
    try:
        return _content(notice)
    except _SubjectGone:
        return None


def _package_link(workspace_id: int, package_id: int) -> Link:
    return Link("Open the package", public_link(f"/w/{workspace_id}/export/packages/{package_id}"))


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _content(notice: ExportNotice) -> NoticeContent:
    workspace = db.session.get(Workspace, notice.workspace_id)
    if workspace is None:
        raise _SubjectGone
    if notice.kind == NoticeKind.PACKAGE_READY:
        package = db.session.get(ExportPackage, notice.subject_id)
        if package is None:
            raise _SubjectGone
        return NoticeContent(
            subject=f"Workspace export ready: {workspace.name}",
            heading="Your workspace export is ready",
            paragraphs=("The package can be downloaded by the workspace's administrators until it expires.",),
            facts=(
                ("Workspace", workspace.name),
                ("Data as of", _time(package.cutoff_at)),
                ("Rows", f"{package.row_count:,}"),
                ("Size", size_label(package.size_bytes)),
                ("Volumes", str(package.volumes_count)),
                ("Available until", _time(package.expires_at)),
            ),
            link=_package_link(workspace.id, package.id),
        )
    if notice.kind == NoticeKind.PACKAGE_DELETED:
        package = db.session.get(ExportPackage, notice.subject_id)
        if package is None:
            raise _SubjectGone
        paragraphs = [
            "Rhythm staff deleted this package before its retention deadline; its files are removed and its"
            " deliveries not yet made are stopped. Copies already delivered to your destinations stay there."
        ]
        deletion = deletion_of(package.id)
        if deletion is not None and deletion.reason:
            paragraphs.append(f"The reason they gave: {deletion.reason}")
        return NoticeContent(
            subject=f"Workspace export package deleted: {workspace.name}",
            heading="Rhythm staff deleted a workspace export package",
            paragraphs=tuple(paragraphs),
            facts=(
                ("Workspace", workspace.name),
                ("Data as of", _time(package.cutoff_at)),
                ("Deleted", _time(package.settled_at or notice.created_at)),
                ("It would have been kept until", _time(package.expires_at)),
            ),
            link=_package_link(workspace.id, package.id),
        )
    if notice.kind == NoticeKind.EXECUTION_FAILED:
        execution = db.session.get(ExportExecution, notice.subject_id)
        if execution is None:
            raise _SubjectGone
        facts = [("Workspace", workspace.name), ("Requested", _time(execution.created_at))]
        if execution.failure_code:
            facts.append(("Failure", execution.failure_code))
        return NoticeContent(
            subject=f"Workspace export failed: {workspace.name}",
            heading="A workspace export failed",
            paragraphs=(execution.failure_detail or "The export stopped before its package was complete.",),
            facts=tuple(facts),
            link=Link("Open the export", public_link(f"/w/{workspace.id}/export/executions/{execution.id}")),
        )
    delivery = db.session.get(ExportDelivery, notice.subject_id)
    if delivery is None:
        raise _SubjectGone
    destination = db.session.get_one(ExportDestination, delivery.destination_id)
    package = db.session.get_one(ExportPackage, delivery.package_id)
    return NoticeContent(
        subject=f"Workspace export not delivered: {workspace.name}",
        heading="A package could not be delivered",
        paragraphs=(
            "The package was not copied to the destination, and it will not be retried. "
            "Check the destination's settings (Test connection shows the store's answer).",
        ),
        facts=(
            ("Workspace", workspace.name),
            ("Destination", destination.name),
            ("Attempts", str(delivery.attempt_count)),
            ("Failure", delivery.failure_code or ""),
            ("Store's answer", delivery.failure_summary or ""),
            ("Package data as of", _time(package.cutoff_at)),
        ),
        link=_package_link(workspace.id, package.id),
    )
