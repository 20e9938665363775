"""Workspace export executions (DESIGN section 8; seed 003) and their event logs.

The lifecycle lives in app/domain/workspace_export/export_execution.py: each transition is one guarded
statement there (INV-12); nothing else writes the status column.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, BigInteger, CheckConstraint, ForeignKey, Index, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.types import DETAIL_LIMIT, LeaseColumns, UTCDateTime, database_now, newest_first_indexes, one_of, utcnow


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


class ExecutionFailure(StrEnum):
    """Every code an execution may fail with (app/services/workspace_export/production_failures.py,
    the watchdog, staff), each classified once by PLATFORM_FAILURE_CODES below."""

    STALLED = "stalled"
    STOPPED_BY_STAFF = "stopped_by_staff"
    STORAGE_ERROR = "storage_error"
    STORAGE_FULL = "storage_full"
    SNAPSHOT_FAILED = "snapshot_failed"
    TIMEOUT = "timeout"
    COVERAGE_OUT_OF_DATE = "coverage_out_of_date"
    INTERNAL = "internal"
    DATASET_NOT_COVERED = "dataset_not_covered"
    VOLUME_TOO_SMALL = "volume_too_small"


# Failures on our side, which use none of the allowance: everything that happens inside Rhythm
# (the worker died at every attempt, staff stopped it, our storage or database refused, a job ran
# out of time, the coverage registry is being updated, an unexpected error). The customer's are
# the rest, which their settings cause and a change of settings cures: a dataset the settings
# still include after it left coverage, a volume size too small for the rows. (A destination
# refusing a copy fails the delivery, never the execution, so it uses no allowance either.)
PLATFORM_FAILURE_CODES = (
    ExecutionFailure.STALLED,
    ExecutionFailure.STOPPED_BY_STAFF,
    ExecutionFailure.STORAGE_ERROR,
    ExecutionFailure.STORAGE_FULL,
    ExecutionFailure.SNAPSHOT_FAILED,
    ExecutionFailure.TIMEOUT,
    ExecutionFailure.COVERAGE_OUT_OF_DATE,
    ExecutionFailure.INTERNAL,
)


class ExecutionPhase(StrEnum):
    SNAPSHOT = "snapshot"
    WRITING = "writing"
    UPLOADING = "uploading"
    DELIVERING = "delivering"
    NOTIFYING = "notifying"


class ExportExecution(LeaseColumns, Model):
    """One admitted workspace export: `queued → running → succeeded | failed`, `queued → cancelled`.

    At most one queued or running per workspace (INV-09, the partial unique index). Admission
    copies the settings (later edits don't touch it) and records the allowance used.
    """

    __tablename__ = "data_export_executions"
    __table_args__ = (
        CheckConstraint(one_of("status", ExecutionStatus), name="status"),
        CheckConstraint(one_of("trigger", ExecutionTrigger), name="trigger"),
        CheckConstraint(f"phase IS NULL OR {one_of('phase', ExecutionPhase)}", name="phase"),
        CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name="failure_code"),
        CheckConstraint("(trigger = 'cadence') = (cadence_key IS NOT NULL)", name="cadence_key"),
        Index(
            "data_export_executions_one_active_uidx",
            "workspace_id",
            unique=True,
            postgresql_where=text(one_of("status", ACTIVE_EXECUTION_STATUSES)),
            sqlite_where=text(one_of("status", ACTIVE_EXECUTION_STATUSES)),
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
    # The database's clock, as every time a worker records (app/models/types.py database_now).
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=database_now())

    execution: Mapped[ExportExecution] = relationship(back_populates="events")
