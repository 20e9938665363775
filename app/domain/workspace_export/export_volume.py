"""The volume lifecycle of a package being produced (the seed's staging table):
`uploading → complete`, `uploading | complete → discarded`.

A volume row is inserted before its multipart upload opens (so a restart always knows which key
to abort) and only while the attempt that writes it is the execution's current running attempt;
completing it is fenced the same way. Discarding is the clean-up of an earlier or failed
attempt: its upload aborted and its object removed. Each function commits.
"""

from __future__ import annotations

from sqlalchemy import and_, exists, insert, literal, select, update

from app.domain import transitions
from app.domain.errors import TransitionRefused
from app.extensions import db
from app.models.export_execution import ExecutionStatus, ExportExecution
from app.models.export_package import ExportPart, ExportVolume, VolumeStatus
from app.models.types import database_now


def _attempt_is_current(execution_id: int, attempt: int):
    return exists().where(
        ExportExecution.id == execution_id,
        ExportExecution.status == ExecutionStatus.RUNNING,
        ExportExecution.attempt_count == attempt,
    )


def open_volume(execution_id: int, attempt: int, dataset: str, sequence: int, key: str) -> int:
    """Record a volume about to be uploaded by `attempt`; refused once the attempt is stale."""
    values = select(
        literal(execution_id),
        literal(attempt),
        literal(dataset),
        literal(sequence),
        literal(key),
        literal(VolumeStatus.UPLOADING.value),
        database_now(),
    ).where(_attempt_is_current(execution_id, attempt))
    row = db.session.execute(
        insert(ExportVolume)
        .from_select(["execution_id", "attempt", "dataset", "sequence", "key", "status", "created_at"], values)
        .returning(ExportVolume.id)
    ).one_or_none()
    if row is None:
        db.session.rollback()
        raise TransitionRefused(f"workspace export {execution_id}: attempt {attempt} is not current; no volume")
    db.session.commit()
    return row.id


def record_upload(volume_id: int, upload_id: str) -> None:
    """The volume's multipart upload is open under `upload_id`."""
    db.session.execute(
        update(ExportVolume)
        .where(ExportVolume.id == volume_id, ExportVolume.status == VolumeStatus.UPLOADING)
        .values(upload_id=upload_id)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def record_part(volume_id: int, part_number: int, size_bytes: int) -> None:
    db.session.add(ExportPart(volume_id=volume_id, part_number=part_number, size_bytes=size_bytes))
    db.session.commit()


def complete(volume_id: int, execution_id: int, attempt: int, *, size_bytes: int, sha256: str, row_count: int) -> None:
    """uploading → complete, if `attempt` is still current."""
    transitions.apply(
        ExportVolume,
        [
            ExportVolume.id == volume_id,
            ExportVolume.status == VolumeStatus.UPLOADING,
            _attempt_is_current(execution_id, attempt),
        ],
        {
            "status": VolumeStatus.COMPLETE,
            "size_bytes": size_bytes,
            "sha256": sha256,
            "row_count": row_count,
            "completed_at": database_now(),
        },
        f"workspace export {execution_id}: volume {volume_id} cannot complete now",
    )
    db.session.commit()


def discard(volume_id: int) -> bool:
    """uploading | complete → discarded, once its upload is aborted and its object removed.
    Returns False when it was discarded already."""
    row = db.session.execute(
        update(ExportVolume)
        .where(and_(ExportVolume.id == volume_id, ExportVolume.status != VolumeStatus.DISCARDED))
        .values(status=VolumeStatus.DISCARDED)
        .returning(ExportVolume.id)
        .execution_options(synchronize_session=False)
    ).one_or_none()
    db.session.commit()
    return row is not None
