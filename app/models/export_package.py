"""Workspace export packages (DESIGN section 8; seed 001) with their volumes and the parts of each
volume's multipart upload.

Lifecycles live in app/domain: packages in `export_package.py`, volumes in `export_volume.py`.
Each transition is one guarded statement there (INV-12); nothing else writes a status column.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.types import UTCDateTime, newest_first_indexes, one_of, utcnow
from app.vocabulary import PackageFormat

if TYPE_CHECKING:
    from app.models.export_execution import ExportExecution
    from app.models.package_delivery import ExportDelivery


class PackageStatus(StrEnum):
    AVAILABLE = "available"
    EXPIRED = "expired"
    DELETED = "deleted"


class VolumeStatus(StrEnum):
    UPLOADING = "uploading"  # a multipart upload is open; `upload_id` names it
    COMPLETE = "complete"  # the object is stored whole, with its size and checksum
    DISCARDED = "discarded"  # an earlier attempt's volume: its upload aborted, its object removed


class ExportPackage(Model):
    """A produced package (seed 001): `available → expired | deleted`. Made `available` only after
    its manifest is stored; `expires_at` is its retention deadline."""

    __tablename__ = "data_export_artifacts"
    __table_args__ = (
        CheckConstraint(one_of("status", PackageStatus), name="status"),
        CheckConstraint(one_of("format", PackageFormat), name="format"),
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
        CheckConstraint(one_of("status", VolumeStatus), name="status"),
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
