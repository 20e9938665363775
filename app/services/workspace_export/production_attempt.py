"""One attempt at producing a workspace-export package: which execution and attempt it is, what it
has written so far, and the fence every one of its updates goes through.

Every update names the attempt; once a newer attempt or the watchdog took the execution, the
update is refused, the attempt reads that as ExecutionAttemptSuperseded, stops and removes its own objects.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from flask import current_app
from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_execution import ExecutionPhase, ExecutionStatus, ExportExecution
from app.services.workspace_export.package_cleanup import remove_attempt_leftovers
from app.services.workspace_export.package_keys import package_prefix
from app.storage import MultipartUpload, Storage, StorageError

log = logging.getLogger(__name__)


class ExecutionAttemptSuperseded(Exception):
    """The execution settled, or a newer attempt took it over, while this attempt was producing it.

    Outside DomainError: a signal inside the job, which stops the stale attempt quietly."""


@dataclass
class ProductionCounts:
    """What the attempt counted in the snapshot, and has written so far."""

    rows_expected: int = 0
    rows: int = 0
    bytes: int = 0
    volumes: int = 0


@dataclass
class ProductionAttempt:
    """The attempt `number` of execution `execution_id`: the settings it was admitted with, the
    phase it is in, its counts, the prefix its objects go under and its open uploads."""

    execution_id: int
    workspace_id: int
    number: int
    snapshot_settings: dict
    storage: Storage
    counts: ProductionCounts = field(default_factory=ProductionCounts)
    phase: ExecutionPhase = ExecutionPhase.SNAPSHOT

    def __post_init__(self) -> None:
        self.prefix = package_prefix(self.workspace_id, self.execution_id, self.number)
        self.format = self.snapshot_settings["format"]
        self.interval = current_app.config["SETTINGS"].progress_interval_seconds
        self.last_progress = time.monotonic()
        # The multipart uploads of volumes being written, by volume id: aborted if the attempt stops.
        self.open_uploads: dict[int, MultipartUpload] = {}

    def record_progress(self, force: bool = False) -> None:
        """Record the counts so far, at most every PROGRESS_INTERVAL unless `force`."""
        if not force and time.monotonic() - self.last_progress < self.interval:
            return
        with self.fenced():
            export_execution.record_progress(
                self.execution_id,
                self.number,
                rows_written=self.counts.rows,
                bytes_written=self.counts.bytes,
                volumes_count=self.counts.volumes,
            )
        self.last_progress = time.monotonic()

    @contextlib.contextmanager
    def fenced(self) -> Iterator[None]:
        """Run updates that name this attempt; a refused one means the attempt was superseded."""
        try:
            yield
        except TransitionRefused as exc:
            raise ExecutionAttemptSuperseded() from exc

    def ensure_current(self) -> None:
        """Raise ExecutionAttemptSuperseded unless the execution is running this attempt (checked before storing
        an object, which no guarded statement fences)."""
        status, current = db.session.execute(
            select(ExportExecution.status, ExportExecution.attempt_count).where(ExportExecution.id == self.execution_id)
        ).one()
        db.session.rollback()
        if status != ExecutionStatus.RUNNING or current != self.number:
            raise ExecutionAttemptSuperseded()

    def remove_own_leftovers(self) -> None:
        """Abort this attempt's open uploads and remove every object it stored."""
        for upload in list(self.open_uploads.values()):
            with contextlib.suppress(StorageError):
                upload.abort()
        self.open_uploads.clear()
        try:
            remove_attempt_leftovers(self.storage, self.workspace_id, self.execution_id, [self.number])
        except Exception:  # the watchdog's or a later attempt's clean-up tries again
            db.session.rollback()
            log.exception("workspace export %s: removing attempt %s's objects failed", self.execution_id, self.number)
