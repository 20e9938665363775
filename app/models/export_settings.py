"""A workspace's export settings (DESIGN section 8; seed 003): which datasets a package holds and
in which format, the volume size, how long packages are kept, the cadence and who is notified.

Validation rules live in app/domain/workspace_export/export_settings_rules.py; pausing and suspension in
app/domain/workspace_export/export_suspension.py.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, CheckConstraint, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime, one_of, utcnow
from app.vocabulary import PackageFormat

MAX_NOTIFY_PEOPLE = 20
RETENTION_DAYS = (1, 30)
# Volume size bounds in MiB; packages for data tools, so volumes are large but bounded.
VOLUME_SIZE_MB = (16, 2048)
DEFAULT_VOLUME_SIZE_MB = 256


# How the settings page offers each format and the package page names it.
PACKAGE_FORMAT_LABELS: dict[str, str] = {
    PackageFormat.CSV: "CSV",
    PackageFormat.JSONL: "JSON Lines",
    PackageFormat.PARQUET: "Parquet",
}
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


class ExportSettings(Model):
    """One record per workspace (INV-09): what a package holds, how long it is kept, when it runs."""

    __tablename__ = "data_export_definitions"
    __table_args__ = (
        UniqueConstraint("workspace_id", name="data_export_definitions_tenant_uq"),
        CheckConstraint(one_of("format", PackageFormat), name="format"),
        CheckConstraint(one_of("cadence", Cadence), name="cadence"),
        CheckConstraint(one_of("status", SettingsStatus), name="status"),
        CheckConstraint(f"retention_days BETWEEN {RETENTION_DAYS[0]} AND {RETENTION_DAYS[1]}", name="retention_days"),
        CheckConstraint(f"volume_size_mb BETWEEN {VOLUME_SIZE_MB[0]} AND {VOLUME_SIZE_MB[1]}", name="volume_size_mb"),
        CheckConstraint("cadence_weekday IS NULL OR cadence_weekday BETWEEN 0 AND 6", name="cadence_weekday"),
        CheckConstraint("cadence_day IS NULL OR cadence_day BETWEEN 1 AND 28", name="cadence_day"),
        CheckConstraint("status <> 'suspended' OR suspended_reason IS NOT NULL", name="suspended_reason"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    # Covered dataset names (app/domain/workspace_export/coverage.py) the packages include, in catalog order.
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
