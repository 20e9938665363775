"""Schedules (DESIGN section 7, STATE-PFM-QRY-007/008/009): recurring delivery of files by email.

A schedule runs a saved query (a snapshot of its definition, refreshed only on request, INV-07)
or a report (by reference, with the version last seen) on a timetable, as its owner, and emails
its recipients a download link. Each occurrence is one run (unique by schedule and occurrence
time, INV-05); each run keeps its attempts and one delivery row per recipient.

Lifecycles live in app/domain: the schedule's own status in `schedule_lifecycle.py`, runs and attempts in
`schedule_run.py`, recipient deliveries in `recipient_delivery.py`. Run processing never edits
the definition, only the occurrence tracking, the failure streak and the automatic pause (INV-08).
"""

from __future__ import annotations

import secrets
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint, false, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.export_destination import ExportDestination
from app.models.types import (
    DETAIL_LIMIT,
    LeaseColumns,
    UTCDateTime,
    database_now,
    newest_first_indexes,
    one_of,
    utcnow,
)
from app.vocabulary import Heading

if TYPE_CHECKING:
    from app.models.schedule_destination_delivery import DestinationDelivery

MAX_RECIPIENTS = 50


class ScheduleKind(StrEnum):
    """What a schedule's runs make files of: its saved query (a snapshot of it) or its report."""

    QUERY = "query"
    REPORT = "report"


class ScheduleStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class PauseReason(StrEnum):
    USER = "user"
    FAILURE_STREAK = "failure_streak"
    OWNER_ACCESS_LOST = "owner_access_lost"
    SOURCE_REMOVED = "source_removed"
    LEGACY_IMPORT = "legacy_import"


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    # The file was made, and the schedule's send condition said not to send it (`skip_reason` says why).
    SKIPPED = "skipped"


# A run that ended: it never changes again.
SETTLED_RUN_STATUSES = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.SKIPPED)


# A run not yet settled: the dispatcher, the watchdog and the one-manual-run index all mean these.
ACTIVE_RUN_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)


class SendCondition(StrEnum):
    """When a run sends its file (app/domain/schedules/send_conditions.py says what each means)."""

    ALWAYS = "always"
    HAS_ROWS = "has_rows"
    NO_ROWS = "no_rows"
    CHANGED = "changed"


class RunDecision(StrEnum):
    """What a run decided once its file was made, before any delivery row."""

    SEND = "send"
    SKIP = "skip"


class RunTrigger(StrEnum):
    TIMETABLE = "timetable"
    MANUAL = "manual"


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    SUBMITTED = "submitted"
    SKIPPED = "skipped"
    FAILED = "failed"


class SkipReason(StrEnum):
    # Only on rows of runs made before send conditions: a run that sends nothing is now skipped whole.
    EMPTY_RESULT = "empty_result"
    RECIPIENT_REMOVED = "recipient_removed"
    RECIPIENT_NOT_ALLOWED = "recipient_not_allowed"
    RECIPIENT_UNSUBSCRIBED = "recipient_unsubscribed"
    # Run as each recipient: the person can no longer read the schedule's source.
    RECIPIENT_ACCESS_LOST = "recipient_access_lost"


class TemplateStatus(StrEnum):
    DRAFT = "draft"
    PUBLISHED = "published"


class CommunicationTemplate(Model):
    """A workspace's message template; its text lives in numbered versions."""

    __tablename__ = "communication_templates"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    created_by_id: Mapped[int] = mapped_column(ForeignKey("people.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    versions: Mapped[list[CommunicationTemplateVersion]] = relationship(
        back_populates="template", order_by="CommunicationTemplateVersion.number", cascade="all, delete-orphan"
    )


class CommunicationTemplateVersion(Model):
    """One version of a template: `draft → published`; a published version never changes again."""

    __tablename__ = "communication_template_versions"
    __table_args__ = (
        UniqueConstraint("template_id", "number"),
        CheckConstraint(one_of("status", TemplateStatus), name="status"),
        CheckConstraint("status <> 'published' OR published_at IS NOT NULL", name="published_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    template_id: Mapped[int] = mapped_column(ForeignKey("communication_templates.id", ondelete="CASCADE"), index=True)
    number: Mapped[int]
    status: Mapped[str] = mapped_column(String(10), default=TemplateStatus.DRAFT)
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    created_by_id: Mapped[int] = mapped_column(ForeignKey("people.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    template: Mapped[CommunicationTemplate] = relationship(back_populates="versions")


class Schedule(Model):
    __tablename__ = "schedules"
    __table_args__ = (
        UniqueConstraint("workspace_id", "name"),
        # An old system's schedule is imported once per workspace, even by two imports at once.
        UniqueConstraint("workspace_id", "legacy_ref", name="schedules_legacy_ref_uidx"),
        CheckConstraint("kind IN ('query', 'report')", name="kind"),
        CheckConstraint(one_of("status", ScheduleStatus), name="status"),
        CheckConstraint(
            "(status = 'active' AND pause_reason IS NULL)"
            f" OR (status = 'paused' AND {one_of('pause_reason', PauseReason)})",
            name="pause_reason",
        ),
        CheckConstraint("heading IN ('names', 'labels', 'none')", name="heading"),
        CheckConstraint(
            "(kind = 'query' AND format IN ('csv', 'xlsx') AND query_definition IS NOT NULL"
            " AND query_version IS NOT NULL)"
            " OR (kind = 'report' AND format IN ('pdf', 'xlsx'))",
            name="source_shape",
        ),
        CheckConstraint("failure_streak >= 0", name="failure_streak"),
        CheckConstraint(one_of("send_condition", SendCondition), name="send_condition"),
        Index("ix_schedules_due", "status", "next_occurrence_at"),
        # The orders of the Schedules list (keyset pagination, app/services/pages/list_pages.py).
        Index("ix_schedules_list_name", "workspace_id", text("lower(name)"), "id"),
        Index("ix_schedules_list_updated", "workspace_id", "updated_at", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(10))
    owner_id: Mapped[int] = mapped_column(ForeignKey("people.id"), index=True)
    format: Mapped[str] = mapped_column(String(10))
    heading: Mapped[str] = mapped_column(String(10), default=Heading.NAMES)

    # Query schedules: the saved query (deleting it is refused while a schedule uses it) and a
    # snapshot of its definition with the version it was taken from (INV-07).
    source_query_id: Mapped[int | None] = mapped_column(ForeignKey("saved_queries.id"), index=True)
    query_definition: Mapped[dict | None] = mapped_column(JSON)
    query_version: Mapped[int | None]
    # Report schedules: the report (its removal clears this and pauses with source_removed) and
    # the version last seen, so a run can note that the report changed.
    report_id: Mapped[int | None] = mapped_column(ForeignKey("reports.id", ondelete="SET NULL"), index=True)
    report_version_seen: Mapped[int | None]

    # The timetable as app/domain/timing/timetable.py reads and writes it, its zone included.
    timetable: Mapped[dict] = mapped_column(JSON)
    next_occurrence_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_occurrence_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    failure_streak: Mapped[int] = mapped_column(default=0)
    status: Mapped[str] = mapped_column(String(10), default=ScheduleStatus.ACTIVE)
    pause_reason: Mapped[str | None] = mapped_column(String(30))
    paused_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    template_version_id: Mapped[int | None] = mapped_column(ForeignKey("communication_template_versions.id"))
    custom_message: Mapped[str] = mapped_column(Text, default="")
    # When a run sends its file: always, only with rows, only without (an alert), only when changed.
    send_condition: Mapped[str] = mapped_column(
        String(10), default=SendCondition.ALWAYS, server_default=SendCondition.ALWAYS.value
    )
    # An "only when none" alert links (and may attach) the empty file only when the schedule asks.
    alert_with_file: Mapped[bool] = mapped_column(default=False, server_default=false())
    # Each recipient's file is made with that person's own access at run time (people only).
    run_as_recipients: Mapped[bool] = mapped_column(default=False, server_default=false())
    # Attach the file to the email when the workspace's policy allows a file of its size.
    attach_file: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The old system's identifier of an imported schedule; such a schedule starts paused.
    legacy_ref: Mapped[str | None] = mapped_column(String(200))

    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    recipients: Mapped[list[ScheduleRecipient]] = relationship(
        back_populates="schedule", order_by="ScheduleRecipient.position", cascade="all, delete-orphan"
    )
    destinations: Mapped[list[ScheduleDestination]] = relationship(
        back_populates="schedule", order_by="ScheduleDestination.position", cascade="all, delete-orphan"
    )


class ScheduleRecipient(Model):
    """A person of the workspace or an email address; `address_key` makes entries distinct."""

    __tablename__ = "query_schedule_recipients"
    __table_args__ = (
        UniqueConstraint("schedule_id", "address_key"),
        CheckConstraint("(person_id IS NULL) <> (email IS NULL)", name="person_or_email"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    schedule_id: Mapped[int] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(default=0)
    person_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"))
    email: Mapped[str | None] = mapped_column(String(254))
    # "person:<id>" or the address in lower case.
    address_key: Mapped[str] = mapped_column(String(260))

    schedule: Mapped[Schedule] = relationship(back_populates="recipients")


class ScheduleDestination(Model):
    """One of the workspace's destinations a schedule copies each run's file to (at most
    MAX_DESTINATIONS, the registry's own limit). A destination removed later keeps the link, so
    the schedule's page can say it no longer receives; runs make no delivery to it."""

    __tablename__ = "schedule_destinations"
    __table_args__ = (UniqueConstraint("schedule_id", "destination_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    schedule_id: Mapped[int] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"), index=True)
    destination_id: Mapped[int] = mapped_column(
        ForeignKey("data_export_destinations.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(default=0)

    schedule: Mapped[Schedule] = relationship(back_populates="destinations")
    destination: Mapped[ExportDestination] = relationship()


ACTIVE_MANUAL_RUN = f"trigger = 'manual' AND {one_of('status', ACTIVE_RUN_STATUSES)}"
# The error code of a run attempt that left recipients the mail server could not take.
MAIL_UNAVAILABLE = "mail_unavailable"


class ScheduleRun(LeaseColumns, Model):
    """One occurrence of a schedule: `queued → running → succeeded | failed`, attempts appended."""

    __tablename__ = "schedule_runs"
    __table_args__ = (
        # INV-05: concurrent tickers cannot admit one occurrence twice.
        UniqueConstraint("schedule_id", "occurrence_at", name="schedule_runs_occurrence_uidx"),
        # "Run now" is one intent: a form sent again finds the run its token admitted, and while a
        # run started by hand is queued or running no other is admitted, however many presses race.
        UniqueConstraint("schedule_id", "request_token", name="schedule_runs_request_token_uidx"),
        Index(
            "schedule_runs_one_active_manual_uidx",
            "schedule_id",
            unique=True,
            postgresql_where=text(ACTIVE_MANUAL_RUN),
            sqlite_where=text(ACTIVE_MANUAL_RUN),
        ),
        CheckConstraint(one_of("status", RunStatus), name="status"),
        CheckConstraint(one_of("trigger", RunTrigger), name="trigger"),
        CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name="failure_code"),
        CheckConstraint(f"decision IS NULL OR {one_of('decision', RunDecision)}", name="decision"),
        CheckConstraint("status <> 'skipped' OR (decision = 'skip' AND skip_reason IS NOT NULL)", name="skipped"),
        Index("ix_schedule_runs_status", "status", "next_attempt_at"),
        *newest_first_indexes("schedule_runs", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    schedule_id: Mapped[int] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"), index=True)
    occurrence_at: Mapped[datetime] = mapped_column(UTCDateTime)
    trigger: Mapped[str] = mapped_column(String(10), default=RunTrigger.TIMETABLE)
    # Occurrences missed while nothing ran, coalesced into this run (ISO 8601 UTC strings).
    skipped_occurrences: Mapped[list[str]] = mapped_column(JSON, default=list)
    status: Mapped[str] = mapped_column(String(10), default=RunStatus.QUEUED)
    attempt_count: Mapped[int] = mapped_column(default=0)
    # When a transient failure's retry may start (backoff); NULL when not waiting to retry.
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    export_id: Mapped[int | None] = mapped_column(ForeignKey("query_exports.id", ondelete="SET NULL"))
    row_count: Mapped[int | None]
    source_changed: Mapped[bool] = mapped_column(default=False)
    # The SHA-256 of the file's rows as written (query_exports.rows_digest), kept when the run
    # decided, so "only when changed" compares a later run with the last one that sent.
    rows_digest: Mapped[str | None] = mapped_column(String(64))
    # Send or skip, decided once the file is made and before any delivery row: a redelivered run
    # keeps the decision its earlier attempt committed.
    decision: Mapped[str | None] = mapped_column(String(10))
    # Why a skipped run sent nothing, in words ("no rows", "unchanged since run 41").
    skip_reason: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    failure_code: Mapped[str | None] = mapped_column(String(40))
    failure_detail: Mapped[str | None] = mapped_column(String(DETAIL_LIMIT))
    job_id: Mapped[str | None] = mapped_column(String(100))
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The key of the "Run now" form that admitted the run (text_rules.request_key); NULL otherwise.
    request_token: Mapped[str | None] = mapped_column(String(64))

    attempts: Mapped[list[ScheduleRunAttempt]] = relationship(
        back_populates="run", order_by="ScheduleRunAttempt.number", cascade="all, delete-orphan"
    )
    deliveries: Mapped[list[RecipientDelivery]] = relationship(
        back_populates="run", order_by="RecipientDelivery.id", cascade="all, delete-orphan"
    )
    destination_deliveries: Mapped[list[DestinationDelivery]] = relationship(
        back_populates="run", order_by="DestinationDelivery.id", cascade="all, delete-orphan"
    )
    # A run as each recipient: one file per distinct access (none otherwise).
    files: Mapped[list[ScheduleRunFile]] = relationship(order_by="ScheduleRunFile.id", cascade="all, delete-orphan")

    @property
    def waiting_for_mail(self) -> bool:
        """Queued again because the mail server could not take some recipients' messages: the run
        is waiting for the server, not failed."""
        return (
            self.status == RunStatus.QUEUED and bool(self.attempts) and self.attempts[-1].error_code == MAIL_UNAVAILABLE
        )


class ScheduleRunAttempt(Model):
    """One attempt of a run, appended: number, start, end, outcome, error and the file it made."""

    __tablename__ = "schedule_run_attempts"
    __table_args__ = (
        UniqueConstraint("run_id", "number"),
        CheckConstraint("outcome IS NULL OR outcome IN ('succeeded', 'failed')", name="outcome"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("schedule_runs.id", ondelete="CASCADE"), index=True)
    number: Mapped[int]
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=database_now())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    outcome: Mapped[str | None] = mapped_column(String(10))
    error_code: Mapped[str | None] = mapped_column(String(40))
    error_detail: Mapped[str | None] = mapped_column(String(DETAIL_LIMIT))
    export_id: Mapped[int | None] = mapped_column(ForeignKey("query_exports.id", ondelete="SET NULL"))

    run: Mapped[ScheduleRun] = relationship(back_populates="attempts")


def new_link_nonce() -> str:
    """A delivery's link nonce: 256 random bits, which a signed link token names instead of the row's id."""
    return secrets.token_urlsafe(32)


class DownloadLinkColumns:
    """Columns of a delivery whose file opens by a signed link with no sign-in (an email's, a
    webhook's): the random nonce its token names (app/services/pages/public_link_tokens.py), made
    with the row so every message about the row carries the same link, and its downloads."""

    link_nonce: Mapped[str] = mapped_column(String(64), unique=True, default=new_link_nonce)
    download_count: Mapped[int] = mapped_column(default=0)
    last_downloaded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class RecipientDelivery(DownloadLinkColumns, Model):
    """One recipient of one run: `pending → submitted | skipped | failed`.

    A row is claimed by a run attempt (`claimed_attempt`, under a conditional UPDATE) before its
    message is sent and settled only by that attempt, and its message has a fixed Message-ID
    derived from the row, so a run processed twice never emails anyone twice. The download link
    carries a signed token naming `link_nonce`, not the id.
    """

    __tablename__ = "query_schedule_deliveries"
    __table_args__ = (
        UniqueConstraint("run_id", "address_key"),
        CheckConstraint(one_of("status", DeliveryStatus), name="status"),
        CheckConstraint(f"status <> 'skipped' OR {one_of('skip_reason', SkipReason)}", name="skip_reason"),
        CheckConstraint("status <> 'submitted' OR submission_id IS NOT NULL", name="submission_id"),
        CheckConstraint("(person_id IS NULL) <> (email IS NULL)", name="person_or_email"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("schedule_runs.id", ondelete="CASCADE"), index=True)
    address_key: Mapped[str] = mapped_column(String(260))
    person_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    # For an address recipient; a person's address is read when the message is sent.
    email: Mapped[str | None] = mapped_column(String(254))
    status: Mapped[str] = mapped_column(String(10), default=DeliveryStatus.PENDING)
    skip_reason: Mapped[str | None] = mapped_column(String(30))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The run attempt holding the claim: only it may send the message and settle the row.
    claimed_attempt: Mapped[int | None]
    send_attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(String(500))
    submission_id: Mapped[str | None] = mapped_column(String(200))
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The file this row's link opens when the run made one per access (run as each recipient);
    # NULL: the run's own file.
    export_id: Mapped[int | None] = mapped_column(ForeignKey("query_exports.id", ondelete="SET NULL"))
    # Decided when the row is made, so every attempt sends the same message: None when the schedule
    # sends links only, True when the file is attached, False when it was over the limit below.
    attached: Mapped[bool | None] = mapped_column()
    # The workspace's attachment limit (MiB) the decision was made against; None without one.
    attachment_limit_mb: Mapped[int | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    run: Mapped[ScheduleRun] = relationship(back_populates="deliveries")


class ScheduleRunFile(Model):
    """One file of a run as each recipient: made once per distinct access (unique by run and the
    access's key), with that access's first recipient as its requester, and the send condition's
    decision for it."""

    __tablename__ = "schedule_run_files"
    __table_args__ = (
        UniqueConstraint("run_id", "access_key", name="schedule_run_files_access_uidx"),
        CheckConstraint(f"decision IS NULL OR {one_of('decision', RunDecision)}", name="decision"),
        CheckConstraint("decision <> 'skip' OR skip_reason IS NOT NULL", name="skip_reason"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("schedule_runs.id", ondelete="CASCADE"), index=True)
    # SHA-256 of the canonical description of the access (app/domain/schedules/recipient_access.py).
    access_key: Mapped[str] = mapped_column(String(64))
    access: Mapped[dict] = mapped_column(JSON)
    requester_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    export_id: Mapped[int | None] = mapped_column(ForeignKey("query_exports.id", ondelete="SET NULL"))
    row_count: Mapped[int | None]
    rows_digest: Mapped[str | None] = mapped_column(String(64))
    decision: Mapped[str | None] = mapped_column(String(10))
    skip_reason: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ScheduleUnsubscribe(Model):
    """A recipient who asked for no more messages of one schedule (one-click, RFC 8058)."""

    __tablename__ = "schedule_unsubscribes"
    __table_args__ = (UniqueConstraint("schedule_id", "address_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    schedule_id: Mapped[int] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"), index=True)
    address_key: Mapped[str] = mapped_column(String(260))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
