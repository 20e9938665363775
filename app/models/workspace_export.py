"""Workspace export (DESIGN section 8; seeds 003, 001, 000): settings, destinations, executions,
packages with their volumes and parts, deliveries with their attempts, and notices.

Lifecycles live in app/domain: executions in `export_execution.py`, packages in
`export_package.py`, deliveries in `package_delivery.py`. Each transition is one guarded
statement there (INV-12); nothing else writes a status column.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, BigInteger, CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.types import LeaseColumns, UTCDateTime, newest_first_indexes, utcnow

MAX_DESTINATIONS = 5
MAX_NOTIFY_PEOPLE = 20
RETENTION_DAYS = (1, 30)
# Volume size bounds in MiB; packages for data tools, so volumes are large but bounded.
VOLUME_SIZE_MB = (16, 2048)
DEFAULT_VOLUME_SIZE_MB = 256
SUMMARY_LIMIT = 500
DETAIL_LIMIT = 1000


def _in(column: str, values: type[StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"


class PackageFormat(StrEnum):
    CSV = "csv"  # one zipped RFC 4180 CSV per volume
    JSONL = "jsonl"  # one zipped JSON Lines file per volume
    PARQUET = "parquet"  # one Parquet file per volume (typed columns, zstd row groups), not zipped


# How the settings page offers each format and the package page names it.
PACKAGE_FORMAT_DESCRIPTIONS: dict[str, str] = {
    PackageFormat.CSV: "CSV, zipped",
    PackageFormat.JSONL: "JSON Lines, zipped",
    PackageFormat.PARQUET: "Parquet, typed columns, zstd-compressed",
}


class Cadence(StrEnum):
    OFF = "off"
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"


class SettingsStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"  # by the administrator: no cadence executions; Export now still works
    SUSPENDED = "suspended"  # by staff: read-only for the workspace, nothing is admitted


class DestinationKind(StrEnum):
    S3 = "s3"
    DIRECTORY = "directory"  # the embedded default, confined under DESTINATIONS_ROOT


class ExecutionTrigger(StrEnum):
    MANUAL = "manual"
    CADENCE = "cadence"


class ExecutionStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE_EXECUTION_STATUSES = (ExecutionStatus.QUEUED, ExecutionStatus.RUNNING)
# Failure codes of executions the platform failed, not the workspace's settings or data: its
# worker died at every attempt (`stalled`), or staff stopped it. They use none of the allowance.
PLATFORM_FAILURE_CODES = ("stalled", "stopped_by_staff")


class ExecutionPhase(StrEnum):
    SNAPSHOT = "snapshot"
    WRITING = "writing"
    UPLOADING = "uploading"
    DELIVERING = "delivering"
    NOTIFYING = "notifying"


class PackageStatus(StrEnum):
    AVAILABLE = "available"
    EXPIRED = "expired"
    DELETED = "deleted"


class VolumeStatus(StrEnum):
    UPLOADING = "uploading"  # a multipart upload is open; `upload_id` names it
    COMPLETE = "complete"  # the object is stored whole, with its size and checksum
    DISCARDED = "discarded"  # an earlier attempt's volume: its upload aborted, its object removed


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    DELIVERING = "delivering"
    DELIVERED = "delivered"
    FAILED = "failed"
    WITHHELD = "withheld"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"


class FailureClass(StrEnum):
    TRANSIENT = "transient"  # timeouts, 5xx, throttling: retried with backoff
    PERMANENT = "permanent"  # access denied, no such bucket, bad credentials: stops and notifies


class NoticeKind(StrEnum):
    PACKAGE_READY = "package_ready"
    EXECUTION_FAILED = "execution_failed"
    DELIVERY_FAILED = "delivery_failed"
    PACKAGE_DELETED = "package_deleted"  # deleted early by Rhythm staff


class NoticeStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


class ExportSettings(Model):
    """One record per workspace (INV-09): what a package holds, how long it is kept, when it runs."""

    __tablename__ = "data_export_definitions"
    __table_args__ = (
        UniqueConstraint("workspace_id", name="data_export_definitions_tenant_uq"),
        CheckConstraint(_in("format", PackageFormat), name="format"),
        CheckConstraint(_in("cadence", Cadence), name="cadence"),
        CheckConstraint(_in("status", SettingsStatus), name="status"),
        CheckConstraint(f"retention_days BETWEEN {RETENTION_DAYS[0]} AND {RETENTION_DAYS[1]}", name="retention_days"),
        CheckConstraint(f"volume_size_mb BETWEEN {VOLUME_SIZE_MB[0]} AND {VOLUME_SIZE_MB[1]}", name="volume_size_mb"),
        CheckConstraint("cadence_weekday IS NULL OR cadence_weekday BETWEEN 0 AND 6", name="cadence_weekday"),
        CheckConstraint("cadence_day IS NULL OR cadence_day BETWEEN 1 AND 28", name="cadence_day"),
        CheckConstraint("status <> 'suspended' OR suspended_reason IS NOT NULL", name="suspended_reason"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    # Covered dataset names (app/domain/coverage.py) the packages include, in catalog order.
    datasets: Mapped[list[str]] = mapped_column(JSON, default=list)
    format: Mapped[str] = mapped_column(String(10), default=PackageFormat.CSV)
    volume_size_mb: Mapped[int] = mapped_column(default=DEFAULT_VOLUME_SIZE_MB)
    retention_days: Mapped[int] = mapped_column(default=7)
    cadence: Mapped[str] = mapped_column(String(10), default=Cadence.OFF)
    # "HH:MM" in the workspace's time zone; weekday (0 = Monday) for weekly, day of month for monthly.
    cadence_time: Mapped[str] = mapped_column(String(5), default="02:00")
    cadence_weekday: Mapped[int | None]
    cadence_day: Mapped[int | None]
    # When the cadence next admits an execution (UTC); NULL when the cadence is off or paused.
    next_cadence_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    # Person ids of the workspace notified besides its administrators.
    notify_person_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    status: Mapped[str] = mapped_column(String(10), default=SettingsStatus.ACTIVE)
    suspended_reason: Mapped[str | None] = mapped_column(Text)
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ExportDestination(Model):
    """A customer's storage a package is copied to: at most five per workspace, unique by
    connection and path. The secret is encrypted at rest (app/security/credentials.py) and never
    shown again. A removed destination keeps its row for the delivery history."""

    __tablename__ = "data_export_destinations"
    __table_args__ = (
        CheckConstraint(_in("kind", DestinationKind), name="kind"),
        CheckConstraint(
            "(kind = 's3' AND bucket IS NOT NULL AND access_key_id IS NOT NULL AND secret_ciphertext IS NOT NULL)"
            " OR (kind = 'directory' AND bucket IS NULL)",
            name="connection_shape",
        ),
        Index(
            "data_export_destinations_connection_uidx",
            "workspace_id",
            "connection_key",
            "path",
            unique=True,
            postgresql_where=text("removed_at IS NULL"),
            sqlite_where=text("removed_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(10))
    bucket: Mapped[str | None] = mapped_column(String(63))
    region: Mapped[str | None] = mapped_column(String(40))
    endpoint_url: Mapped[str | None] = mapped_column(String(300))
    access_key_id: Mapped[str | None] = mapped_column(String(128))
    secret_ciphertext: Mapped[str | None] = mapped_column(Text)
    # What makes two destinations the same connection: "s3:<endpoint>/<bucket>" or "directory:".
    connection_key: Mapped[str] = mapped_column(String(400))
    # Relative path inside the bucket or the directory root; "" for the top.
    path: Mapped[str] = mapped_column(String(500), default="")
    enabled: Mapped[bool] = mapped_column(default=True)
    last_tested_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_test_ok: Mapped[bool | None]
    last_test_message: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class ExportExecution(LeaseColumns, Model):
    """One admitted workspace export: `queued → running → succeeded | failed`, `queued → cancelled`.

    At most one queued or running per workspace (INV-09, the partial unique index). Admission
    copies the settings (later edits don't touch it) and records the allowance used.
    """

    __tablename__ = "data_export_executions"
    __table_args__ = (
        CheckConstraint(_in("status", ExecutionStatus), name="status"),
        CheckConstraint(_in("trigger", ExecutionTrigger), name="trigger"),
        CheckConstraint(f"phase IS NULL OR {_in('phase', ExecutionPhase)}", name="phase"),
        CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name="failure_code"),
        CheckConstraint("(trigger = 'cadence') = (cadence_key IS NOT NULL)", name="cadence_key"),
        Index(
            "data_export_executions_one_active_uidx",
            "workspace_id",
            unique=True,
            postgresql_where=text("status IN ('queued', 'running')"),
            sqlite_where=text("status IN ('queued', 'running')"),
        ),
        # A cadence period admits one execution, however many schedulers tick at once.
        UniqueConstraint("workspace_id", "cadence_key", name="data_export_executions_cadence_uidx"),
        Index("ix_data_export_executions_status", "status"),
        *newest_first_indexes("data_export_executions", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    trigger: Mapped[str] = mapped_column(String(10))
    # The cadence period this execution is for ("daily:2026-12-01", …); NULL for manual ones.
    cadence_key: Mapped[str | None] = mapped_column(String(40))
    requested_by_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    # Admission time; the running attempt replaces it with the moment its snapshot was taken.
    cutoff_at: Mapped[datetime] = mapped_column(UTCDateTime)
    settings_snapshot: Mapped[dict] = mapped_column(JSON)
    # Executions admitted in the rolling window, this one included, and the allowance then.
    allowance_used: Mapped[int]
    allowance_limit: Mapped[int]
    status: Mapped[str] = mapped_column(String(10), default=ExecutionStatus.QUEUED)
    phase: Mapped[str | None] = mapped_column(String(12))
    attempt_count: Mapped[int] = mapped_column(default=0)
    datasets_count: Mapped[int] = mapped_column(default=0)
    rows_expected: Mapped[int | None] = mapped_column(BigInteger)
    rows_written: Mapped[int] = mapped_column(BigInteger, default=0)
    bytes_written: Mapped[int] = mapped_column(BigInteger, default=0)
    volumes_count: Mapped[int] = mapped_column(default=0)
    failure_code: Mapped[str | None] = mapped_column(String(40))
    failure_detail: Mapped[str | None] = mapped_column(String(DETAIL_LIMIT))
    job_id: Mapped[str | None] = mapped_column(String(100))
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Last time the running attempt reported progress (for people; liveness is the lease).
    progress_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    cancelled_by_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))

    events: Mapped[list[ExportJobEvent]] = relationship(
        back_populates="execution", order_by="ExportJobEvent.id", cascade="all, delete-orphan"
    )

    @property
    def counts_against_allowance(self) -> bool:
        """Whether it uses one of the allowance's exports: not when cancelled before it started, nor
        when the platform failed it (the same rule execution_admission.allowance counts by)."""
        if self.status == ExecutionStatus.CANCELLED:
            return False
        return not (self.status == ExecutionStatus.FAILED and self.failure_code in PLATFORM_FAILURE_CODES)


class ExportJobEvent(Model):
    """The execution's append-only event log: phases started and finished, counts, warnings, errors."""

    __tablename__ = "data_export_job_events"
    __table_args__ = (
        CheckConstraint(
            "kind IN ('admitted', 'phase_started', 'phase_finished', 'counts', 'warning', 'error', 'cancelled')",
            name="kind",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    execution_id: Mapped[int] = mapped_column(ForeignKey("data_export_executions.id", ondelete="CASCADE"), index=True)
    attempt: Mapped[int] = mapped_column(default=0)
    kind: Mapped[str] = mapped_column(String(20))
    phase: Mapped[str | None] = mapped_column(String(12))
    message: Mapped[str] = mapped_column(String(DETAIL_LIMIT))
    details: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    execution: Mapped[ExportExecution] = relationship(back_populates="events")


class ExportPackage(Model):
    """A produced package (seed 001): `available → expired | deleted`. Made `available` only after
    its manifest is stored; `expires_at` is its retention deadline."""

    __tablename__ = "data_export_artifacts"
    __table_args__ = (
        CheckConstraint(_in("status", PackageStatus), name="status"),
        CheckConstraint(_in("format", PackageFormat), name="format"),
        UniqueConstraint("execution_id", name="data_export_artifacts_execution_uidx"),
        Index("ix_data_export_artifacts_due", "status", "expires_at"),
        *newest_first_indexes("data_export_artifacts", "created_at"),
        # The workspace's package list filtered by status or by format, in either time order.
        Index("ix_data_export_artifacts_list_status", "workspace_id", "status", "created_at", "id"),
        Index("ix_data_export_artifacts_list_format", "workspace_id", "format", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # A public identifier, chosen by the attempt that produced it and written in the manifest.
    uid: Mapped[str] = mapped_column(String(36), unique=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    execution_id: Mapped[int] = mapped_column(ForeignKey("data_export_executions.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(10), default=PackageStatus.AVAILABLE)
    format: Mapped[str] = mapped_column(String(10))
    cutoff_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Every key of the package lies under this prefix (INV-14); the manifest is `<prefix>manifest.json`.
    prefix: Mapped[str] = mapped_column(String(300))
    manifest_key: Mapped[str] = mapped_column(String(400))
    manifest_size: Mapped[int] = mapped_column(BigInteger)
    manifest_sha256: Mapped[str] = mapped_column(String(64))
    datasets_count: Mapped[int]
    row_count: Mapped[int] = mapped_column(BigInteger)
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    volumes_count: Mapped[int]
    retention_days: Mapped[int]
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deleted_by_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    # Set once the sweep or the deletion removed the stored bytes.
    bytes_removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    execution: Mapped[ExportExecution] = relationship()
    deliveries: Mapped[list[ExportDelivery]] = relationship(
        back_populates="package", order_by="ExportDelivery.id", cascade="all, delete-orphan"
    )


class ExportVolume(Model):
    """A volume file of an execution's package, recorded as it is uploaded (the seed's staging
    table): a restarted execution aborts or removes what an earlier attempt left."""

    __tablename__ = "data_export_volumes"
    __table_args__ = (
        CheckConstraint(_in("status", VolumeStatus), name="status"),
        UniqueConstraint("execution_id", "key", name="data_export_volumes_key_uidx"),
        CheckConstraint("status <> 'complete' OR (size_bytes IS NOT NULL AND sha256 IS NOT NULL)", name="complete"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    execution_id: Mapped[int] = mapped_column(ForeignKey("data_export_executions.id", ondelete="CASCADE"), index=True)
    attempt: Mapped[int]
    dataset: Mapped[str] = mapped_column(String(100))
    # 1, 2, … within the dataset.
    sequence: Mapped[int]
    key: Mapped[str] = mapped_column(String(400))
    upload_id: Mapped[str | None] = mapped_column(String(300))
    status: Mapped[str] = mapped_column(String(10), default=VolumeStatus.UPLOADING)
    row_count: Mapped[int | None] = mapped_column(BigInteger)
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    parts: Mapped[list[ExportPart]] = relationship(
        back_populates="volume", order_by="ExportPart.part_number", cascade="all, delete-orphan"
    )


class ExportPart(Model):
    """One uploaded part of a volume's multipart upload (the seed's part table)."""

    __tablename__ = "data_export_parts"
    __table_args__ = (UniqueConstraint("volume_id", "part_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    volume_id: Mapped[int] = mapped_column(ForeignKey("data_export_volumes.id", ondelete="CASCADE"), index=True)
    part_number: Mapped[int]
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    volume: Mapped[ExportVolume] = relationship(back_populates="parts")


class ExportDelivery(LeaseColumns, Model):
    """A package's delivery to one destination (seed 000). A superseded row stays as history; its
    replacement is a new row (`replaces_id`)."""

    __tablename__ = "data_export_deliveries"
    __table_args__ = (
        CheckConstraint(_in("status", DeliveryStatus), name="status"),
        CheckConstraint(f"failure_class IS NULL OR {_in('failure_class', FailureClass)}", name="failure_class"),
        CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name="failure_code"),
        # One live delivery per package and destination; superseded rows are history.
        Index(
            "data_export_deliveries_live_uidx",
            "package_id",
            "destination_id",
            unique=True,
            postgresql_where=text("status <> 'superseded'"),
            sqlite_where=text("status <> 'superseded'"),
        ),
        Index("ix_data_export_deliveries_due", "status", "next_attempt_at"),
        *newest_first_indexes("data_export_deliveries", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    package_id: Mapped[int] = mapped_column(ForeignKey("data_export_artifacts.id", ondelete="CASCADE"), index=True)
    destination_id: Mapped[int] = mapped_column(ForeignKey("data_export_destinations.id"), index=True)
    status: Mapped[str] = mapped_column(String(12), default=DeliveryStatus.PENDING)
    attempt_count: Mapped[int] = mapped_column(default=0)
    # When a transiently failed delivery may be retried; NULL otherwise.
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    failure_class: Mapped[str | None] = mapped_column(String(10))
    failure_code: Mapped[str | None] = mapped_column(String(60))
    failure_summary: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))
    # Where the package landed ("s3://bucket/path/…" or the directory path), once delivered.
    location: Mapped[str | None] = mapped_column(String(600))
    replaces_id: Mapped[int | None] = mapped_column(ForeignKey("data_export_deliveries.id"))
    superseded_by_id: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    job_id: Mapped[str | None] = mapped_column(String(100))
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    package: Mapped[ExportPackage] = relationship(back_populates="deliveries")
    destination: Mapped[ExportDestination] = relationship()
    attempts: Mapped[list[ExportDeliveryAttempt]] = relationship(
        back_populates="delivery", order_by="ExportDeliveryAttempt.number", cascade="all, delete-orphan"
    )


class ExportDeliveryAttempt(Model):
    """One transfer attempt, appended; its number is allocated under the delivery's row lock."""

    __tablename__ = "data_export_delivery_attempts"
    __table_args__ = (
        UniqueConstraint("delivery_id", "number"),
        CheckConstraint("outcome IS NULL OR outcome IN ('delivered', 'failed')", name="outcome"),
        CheckConstraint(f"failure_class IS NULL OR {_in('failure_class', FailureClass)}", name="failure_class"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("data_export_deliveries.id", ondelete="CASCADE"), index=True)
    number: Mapped[int]
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    outcome: Mapped[str | None] = mapped_column(String(10))
    failure_class: Mapped[str | None] = mapped_column(String(10))
    failure_code: Mapped[str | None] = mapped_column(String(60))
    summary: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))

    delivery: Mapped[ExportDelivery] = relationship(back_populates="attempts")


class ExportNotice(Model):
    """A notice email, recorded once per (subject, kind, person) so a retried step never notifies twice."""

    __tablename__ = "data_export_notices"
    __table_args__ = (
        CheckConstraint(_in("kind", NoticeKind), name="kind"),
        CheckConstraint(_in("status", NoticeStatus), name="status"),
        CheckConstraint("subject_type IN ('execution', 'package', 'delivery')", name="subject_type"),
        UniqueConstraint("subject_type", "subject_id", "kind", "person_id", name="data_export_notices_once_uidx"),
        Index("ix_data_export_notices_pending", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    subject_type: Mapped[str] = mapped_column(String(10))
    subject_id: Mapped[int]
    kind: Mapped[str] = mapped_column(String(20))
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(10), default=NoticeStatus.PENDING)
    attempt_count: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))
    message_id: Mapped[str | None] = mapped_column(String(300))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
