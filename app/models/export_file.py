"""Export files (query_exports) and their outbox requests (query_export_requests).

Lifecycle STATE-PFM-QRY-006; transitions live in app/domain/files/export_file.py. The CHECK
constraints carry INV-03: each source kind (a saved query, a report, the workspace's audit log)
has its own shape and permitted formats, and a descriptions row is an Excel option only.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import JSON, BigInteger, CheckConstraint, ForeignKey, Index, String, UniqueConstraint, false, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.types import DETAIL_LIMIT, LeaseColumns, UTCDateTime, newest_first_indexes, utcnow
from app.vocabulary import Heading


class FileStatus(StrEnum):
    """A file's stored status; `expired` is computed on read and is not one of them."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


ACTIVE_FILE_STATUSES = (FileStatus.QUEUED, FileStatus.RUNNING)
TERMINAL_STATUSES = (FileStatus.SUCCEEDED, FileStatus.FAILED)
# A file's page polls every 0.5 s for this long after the request, then every 2 s.
FAST_POLL_FOR = timedelta(seconds=5)


class FailureCode(StrEnum):
    """Why a file failed; the file page has one readable message per code."""

    ACCESS_LOST = "access_lost"
    SOURCE_MISSING = "source_missing"
    INVALID_REQUEST = "invalid_request"
    STORAGE_ERROR = "storage_error"
    # The store had no room left: nothing the person can change; a retry waits for space.
    STORAGE_FULL = "storage_full"
    TIMEOUT = "timeout"
    TOO_MANY_ROWS = "too_many_rows"
    INTERNAL = "internal"
    # Its requester (or an administrator) stopped it while it was queued or running.
    CANCELLED = "cancelled"


class FileKind(StrEnum):
    """What a file's rows come from: a saved query, a report, or the workspace's audit log."""

    QUERY = "query"
    REPORT = "report"
    AUDIT = "audit"


class FileFormat(StrEnum):
    """The formats a file is made in; which ones a source allows is the source_shape CHECK's (INV-03)."""

    CSV = "csv"
    XLSX = "xlsx"
    PDF = "pdf"


# What a file of a query's rows may be, asked for by a person or a schedule.
QUERY_FORMATS = (FileFormat.CSV, FileFormat.XLSX)
# How pages, lists and refusals name each format.
FORMAT_LABELS: dict[str, str] = {FileFormat.CSV: "CSV", FileFormat.XLSX: "Excel (XLSX)", FileFormat.PDF: "PDF"}


def _one_of(column: str, values: type[StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(value.value) for value in values)})"


class ExportFile(LeaseColumns, Model):
    """A file a person (or a schedule, as its owner) asked for: of a saved query, a report or the
    audit log (`kind`). The table keeps the name it had when only queries made files."""

    __tablename__ = "query_exports"
    __table_args__ = (
        CheckConstraint(_one_of("status", FileStatus), name="status"),
        CheckConstraint("kind IN ('query', 'report', 'audit')", name="kind"),
        CheckConstraint("heading IN ('names', 'labels', 'none')", name="heading"),
        CheckConstraint("include_descriptions = false OR format = 'xlsx'", name="include_descriptions"),
        CheckConstraint("exact_values = false OR format = 'csv'", name="exact_values"),
        CheckConstraint(
            "(kind = 'query' AND dataset IS NOT NULL AND request IS NOT NULL"
            " AND format IN ('csv', 'xlsx') AND report_kind IS NULL)"
            " OR (kind = 'report' AND report_kind IN ('table', 'coded', 'summary')"
            " AND (format = 'pdf' OR (format = 'xlsx' AND report_kind IN ('table', 'coded'))))"
            " OR (kind = 'audit' AND dataset IS NULL AND request IS NOT NULL AND format = 'csv'"
            " AND report_kind IS NULL)",
            name="source_shape",
        ),
        CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name="failure_code"),
        CheckConstraint(
            "status <> 'succeeded' OR (completed_at IS NOT NULL AND expires_at IS NOT NULL"
            " AND size_bytes IS NOT NULL AND row_count IS NOT NULL)",
            name="success_outcome",
        ),
        # One file per request form sent: a repeated POST of the same form finds this row.
        UniqueConstraint("requester_id", "request_token", name="query_exports_request_token_uidx"),
        *newest_first_indexes("query_exports", "requested_at"),
        # The Files list reads one person's files a page at a time (keyset pagination in
        # app/services/pages/list_pages.py): each order it offers walks one of these without sorting.
        Index("ix_query_exports_list_newest", "workspace_id", "requester_id", "requested_at", "id"),
        Index("ix_query_exports_list_status", "workspace_id", "requester_id", "status", "requested_at", "id"),
        Index("ix_query_exports_list_name", "workspace_id", "requester_id", text("lower(source_name)"), "id"),
        # The overview's "about to expire" finds a person's succeeded files by expiry.
        Index("ix_query_exports_expiry", "workspace_id", "requester_id", "status", "expires_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    requester_id: Mapped[int] = mapped_column(ForeignKey("people.id"), index=True)
    kind: Mapped[str] = mapped_column(String(10))
    # Origin metadata only: the file keeps its name and request when the source goes away.
    source_query_id: Mapped[int | None] = mapped_column(ForeignKey("saved_queries.id", ondelete="SET NULL"))
    source_name: Mapped[str] = mapped_column(String(200))
    source_version: Mapped[int]
    dataset: Mapped[str | None] = mapped_column(String(100))
    # What the file's rows are (app/domain/sources/stored_request.py): a FileRequest's JSON for query and
    # report files, an AuditSelection's (the audit page's filters) for a file of the audit log.
    request: Mapped[dict | None] = mapped_column(JSON)
    # Removing a report clears this reference; the file keeps its name, print parameters and history.
    report_id: Mapped[int | None] = mapped_column(ForeignKey("reports.id", ondelete="SET NULL"), index=True)
    # A file a schedule's run produced: people with schedule authority may read it too (INV-04).
    schedule_id: Mapped[int | None] = mapped_column(ForeignKey("schedules.id", ondelete="SET NULL"), index=True)
    report_kind: Mapped[str | None] = mapped_column(String(10))
    # The JSON of a PrintParams (app/domain/sources/print_params.py): the page and layout a report file prints.
    print_params: Mapped[dict | None] = mapped_column(JSON)
    format: Mapped[str] = mapped_column(String(10))
    heading: Mapped[str] = mapped_column(String(10), default=Heading.NAMES)
    include_descriptions: Mapped[bool] = mapped_column(default=False)
    # CSV for data tools: text exactly as stored, without the leading `'` that keeps spreadsheets safe.
    exact_values: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The IANA zone an XLSX file writes its time stamps in (chosen at request: UTC or the workspace's).
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")

    status: Mapped[str] = mapped_column(String(10), default=FileStatus.QUEUED.value, index=True)
    storage_key: Mapped[str] = mapped_column(String(500), unique=True)
    file_name: Mapped[str] = mapped_column(String(255))
    rows_written: Mapped[int] = mapped_column(default=0)
    rows_total: Mapped[int | None]
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    row_count: Mapped[int | None]
    # SHA-256 of the rows as the writer wrote them (app/rendering/row_digest.py), never of the bytes.
    rows_digest: Mapped[str | None] = mapped_column(String(64))
    attempt_count: Mapped[int] = mapped_column(default=0)
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The key of the request form that asked for the file: its one-time token with the choices it was
    # sent with (text_rules.request_key); none for schedules and old pages.
    request_token: Mapped[str | None] = mapped_column(String(64))
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    failure_code: Mapped[str | None] = mapped_column(String(40))
    failure_detail: Mapped[str | None] = mapped_column(String(DETAIL_LIMIT))
    # Who cancelled the file (failure code `cancelled`); cleared if that person is removed.
    cancelled_by_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    # Limits that changed data, {code: count} (app/domain/files/file_warnings.py); None when there were none.
    warnings: Mapped[dict[str, int] | None] = mapped_column(JSON)

    outbox: Mapped[ExportFileRequest] = relationship(back_populates="export", cascade="all, delete-orphan")

    def is_expired(self, now: datetime) -> bool:
        """Expiry is computed on read (STATE-PFM-QRY-006): never a stored status."""
        return self.status == FileStatus.SUCCEEDED and self.expires_at is not None and now >= self.expires_at

    def display_status(self, now: datetime) -> str:
        return "expired" if self.is_expired(now) else self.status

    @property
    def is_settled(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def percent(self) -> int | None:
        if self.status == FileStatus.SUCCEEDED:
            return 100
        if not self.rows_total:
            return None
        return min(99, int(self.rows_written * 100 / self.rows_total))

    def poll_interval(self, now: datetime) -> str:
        """How often the page asks for this file's progress (an htmx interval): quickly while the
        file is young, since a small file settles within a second or two, then every 2 s."""
        return "500ms" if now - self.requested_at < FAST_POLL_FOR else "2s"


class ExportFileRequest(Model):
    """The outbox row committed with its file (INV-01); the dispatcher moves it onto RQ."""

    __tablename__ = "query_export_requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    export_id: Mapped[int] = mapped_column(ForeignKey("query_exports.id", ondelete="CASCADE"), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    dispatch_count: Mapped[int] = mapped_column(default=0)
    job_id: Mapped[str | None] = mapped_column(String(100))

    export: Mapped[ExportFile] = relationship(back_populates="outbox")
