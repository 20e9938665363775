"""Sweeps: the bytes of expired export files are removed from storage (DESIGN §9).

A file stays `succeeded`; "expired" is computed on read from `expires_at`, so removing its bytes
changes no row. The sweep starts from what storage holds rather than from the rows: each pass
looks only at objects still stored, so work done once is never repeated, nothing has to be
recorded, and a pass that stops halfway is simply finished by the next one. Objects left under
a failed file's key (an attempt that completed its upload after the file failed) go as well.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select

from app.extensions import db
from app.models import ExportFile
from app.models.export_file import FileStatus
from app.models.types import utcnow
from app.storage import get_storage

log = logging.getLogger(__name__)

# Every export file's key starts here (app.services.files.file_requests.storage_key_for).
FILE_KEY_PREFIX = "files/"
_BATCH = 500


def sweep_expired_files(now: datetime | None = None) -> int:
    """Delete stored objects of expired and of failed files; returns how many were deleted."""
    now = now or utcnow()
    storage = get_storage()
    stored = storage.list_keys(FILE_KEY_PREFIX)
    deleted = 0
    for start in range(0, len(stored), _BATCH):
        batch = stored[start : start + _BATCH]
        removable = db.session.scalars(
            select(ExportFile.storage_key).where(
                ExportFile.storage_key.in_(batch),
                (ExportFile.status == FileStatus.FAILED)
                | ((ExportFile.status == FileStatus.SUCCEEDED) & (ExportFile.expires_at <= now)),
            )
        ).all()
        db.session.rollback()
        for key in removable:
            storage.delete(key)
            deleted += 1
    if deleted:
        log.info("sweep removed %s stored export files", deleted)
    return deleted
