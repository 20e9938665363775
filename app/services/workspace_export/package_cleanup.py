"""Removing what attempts of a workspace export left in storage: open multipart uploads, volume
objects, a manifest written before the attempt stopped.

Used by a restarted attempt (for every earlier attempt), by an attempt that failed or found
itself superseded (for itself: each attempt writes under a prefix of its own, so this never
touches another attempt's work), and after the watchdog gave an execution up or staff marked it
failed (`remove_leftovers_of_settled`).

An attempt that published its package is never cleaned up, whoever asks: the package row names
that attempt's prefix, and its objects are the package's until retention removes them
(app/services/workspace_export/package_retention.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sqlalchemy import select

from app.domain.workspace_export import export_volume
from app.extensions import db
from app.models.export_package import ExportPackage, ExportVolume, VolumeStatus
from app.services.workspace_export.package_keys import package_prefix
from app.storage import Storage, get_storage

log = logging.getLogger(__name__)


def remove_attempt_leftovers(storage: Storage, workspace_id: int, execution_id: int, attempts: Iterable[int]) -> int:
    """Abort the uploads and delete the objects of `attempts` of the execution, except the attempt
    whose package was published; their volume rows become `discarded`. Returns how many objects
    and uploads were removed. StorageError propagates (the caller decides whether the clean-up is
    retried later)."""
    published = set(db.session.scalars(select(ExportPackage.prefix).where(ExportPackage.execution_id == execution_id)))
    attempts = sorted(
        attempt for attempt in set(attempts) if package_prefix(workspace_id, execution_id, attempt) not in published
    )
    if not attempts:
        db.session.rollback()
        return 0
    volumes = db.session.execute(
        select(ExportVolume.id, ExportVolume.key)
        .where(
            ExportVolume.execution_id == execution_id,
            ExportVolume.attempt.in_(attempts),
            ExportVolume.status != VolumeStatus.DISCARDED,
        )
        .order_by(ExportVolume.id)
    ).all()
    db.session.rollback()
    removed = 0
    for volume in volumes:
        removed += storage.abort_uploads(volume.key)
        if storage.exists(volume.key):
            storage.delete(volume.key)
            removed += 1
        export_volume.discard(volume.id)
    # Objects no volume row names: the manifest, or a volume whose row insert was the last thing
    # a killed attempt did.
    for attempt in attempts:
        for key in storage.list_keys(package_prefix(workspace_id, execution_id, attempt)):
            storage.delete(key)
            removed += 1
    if removed:
        log.info("workspace export %s: removed %s leftovers of attempts %s", execution_id, removed, attempts)
    return removed


def remove_leftovers_of_settled(workspace_id: int, execution_id: int, attempts: int) -> None:
    """After an execution was settled by someone other than its attempt (the watchdog giving it up,
    staff marking it failed): remove the unpublished leftovers of its attempts 1..`attempts`. A
    failure is logged with the execution id, never raised: the settlement stands. An attempt still
    alive finds its next update refused and removes its own objects as well."""
    try:
        remove_attempt_leftovers(get_storage(), workspace_id, execution_id, range(1, attempts + 1))
    except Exception:
        db.session.rollback()
        log.exception("workspace export %s: removing the leftovers of its %s attempts failed", execution_id, attempts)
