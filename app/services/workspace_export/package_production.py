"""Producing a workspace-export package: the use case the RQ job `jobs.package_execution.run` runs.

Phases (each logged as started and finished, with counts):

- snapshot: one consistent snapshot of the workspace (app/data/package_snapshot.py); its time
  is the cutoff the execution records; the rows of every dataset are counted (rows_expected).
- writing: each dataset streamed into volumes no larger than the volume size (zipped CSV or
  JSON Lines, or Parquet files: app/rendering/package), each volume uploaded through a multipart
  upload as it is written, recorded (app/domain/export_volume.py) before its upload opens and
  completed with its size, row count and SHA-256; every part is recorded too. Progress at most
  every PROGRESS_INTERVAL.
- uploading: SHA256SUMS (every volume's checksum, for `sha256sum -c`), then the manifest, last;
  then the package becomes `available` (fenced on the attempt).
- delivering: app.services.workspace_export.package_delivery.deliver_package, with the bytes copied to each
  destination recorded as `counts` events (_DeliveryProgress).
- notifying: a PACKAGE_READY notice; then the execution succeeds.

An attempt starts only from `queued`, or from `running` once the earlier holder's lease lapsed
(the watchdog redelivered it, app/services/workspace_export/execution_watchdog.py); a job arriving while the
holder lives starts nothing. Every attempt writes under a prefix of its own
(app/services/workspace_export/package_keys.py), and a redelivered one first removes what earlier attempts left
unpublished (aborted uploads, objects), so nothing stray remains; when an earlier attempt had
already published the package, it goes on from delivering that package. Every update names the
attempt; once a newer attempt or the watchdog took the execution, this attempt's updates are
refused and it stops, removing its own objects. A failure settles the execution
`failed` with a code and a sentence a person can read (never SQL or a stack trace: those go to
the log with the execution id) and sends an EXECUTION_FAILED notice.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import time
import uuid
from collections.abc import Generator
from dataclasses import dataclass, field

from flask import current_app
from rq.timeouts import JobTimeoutException
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from app.data.package_snapshot import (
    DatasetNotCovered,
    PackagedDataset,
    PackageSnapshot,
    open_snapshot,
    packaged_datasets,
)
from app.domain import export_execution, export_package, export_volume
from app.domain.errors import TransitionRefused
from app.extensions import db
from app.models.types import utcnow
from app.models.workspace_export import (
    ACTIVE_EXECUTION_STATUSES,
    ExecutionPhase,
    ExecutionStatus,
    ExportDelivery,
    ExportDestination,
    ExportExecution,
    ExportPackage,
    NoticeKind,
    PackageFormat,
)
from app.rendering.package.checksums import build_checksums
from app.rendering.package.encoders import encoder_for
from app.rendering.package.manifest import ManifestChecksums, ManifestDataset, ManifestVolume, build_manifest
from app.rendering.package.volumes import (
    VolumeOverflow,
    VolumeResult,
    VolumeTooSmall,
    encoded_batches,
    record_batches,
    write_dataset_volumes,
)
from app.services.platform import leases
from app.services.workspace_export import export_notices, package_delivery
from app.services.workspace_export.coverage import RegistryOutOfDate, verified_registry_version
from app.services.workspace_export.package_cleanup import remove_attempt_leftovers
from app.services.workspace_export.package_keys import (
    checksums_key,
    manifest_key,
    package_prefix,
    relative_to_package,
    volume_key,
)
from app.storage import MultipartUpload, Storage, StorageError, get_storage

log = logging.getLogger(__name__)

# Least time between two progress events of one destination's copy (its end is always recorded).
DELIVERY_EVENT_SECONDS = 10.0


class ExecutionAttemptSuperseded(Exception):
    """The execution settled, or a newer attempt took it over, while this attempt was producing it.

    Outside DomainError: a signal inside the job, which stops the stale attempt quietly."""


class _PhaseFailure(Exception):
    """A failure with its code and the sentence a person reads.

    Outside DomainError: a signal inside the job, from a phase to the execution's settlement."""

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


def run_execution(execution_id: int) -> str:
    """Produce the package of execution `execution_id`, or record why not; returns one word for logs."""
    execution = db.session.get(ExportExecution, execution_id)
    if execution is None:
        log.warning("workspace export %s does not exist (deleted with its workspace?); nothing to do", execution_id)
        return "missing"
    if execution.status not in ACTIVE_EXECUTION_STATUSES:
        log.info("workspace export %s is already %s; redelivery acknowledged", execution_id, execution.status)
        return "already_settled"
    workspace_id, snapshot_settings = execution.workspace_id, dict(execution.settings_snapshot)
    started_at = utcnow()
    try:
        attempt = export_execution.start_attempt(
            execution_id, leases.holder_name(), leases.lease_expiry(started_at), now=started_at
        )
    except TransitionRefused:
        log.info(
            "workspace export %s settled, or its attempt still holds a live lease, before this job could start "
            "an attempt; the job leaves it alone",
            execution_id,
        )
        return "not_started"

    production = _Production(execution_id, workspace_id, attempt, snapshot_settings, get_storage())

    def renew(lease_expires_at) -> None:
        export_execution.renew_lease(execution_id, attempt, lease_expires_at)

    with leases.renewed_while_running(renew, f"workspace export {execution_id}"):
        return production.run()


@dataclass
class _Counts:
    rows_expected: int = 0
    rows: int = 0
    bytes: int = 0
    volumes: int = 0


@dataclass
class _Production:
    execution_id: int
    workspace_id: int
    attempt: int
    snapshot_settings: dict
    storage: Storage
    counts: _Counts = field(default_factory=_Counts)
    phase: ExecutionPhase = ExecutionPhase.SNAPSHOT

    def __post_init__(self) -> None:
        self.prefix = package_prefix(self.workspace_id, self.execution_id, self.attempt)
        self.format = self.snapshot_settings["format"]
        self.interval = current_app.config["SETTINGS"].progress_interval_seconds
        self.last_progress = time.monotonic()
        self.open_uploads: dict[int, MultipartUpload] = {}

    # -- the attempt ---------------------------------------------------------------------------

    def run(self) -> str:
        try:
            package_id = self._resumed_package() or self._produce()
        except ExecutionAttemptSuperseded:
            log.info(
                "workspace export %s attempt %s was settled or restarted elsewhere; it stopped",
                self.execution_id,
                self.attempt,
            )
            self._remove_own_leftovers()
            return "superseded"
        except Exception as exc:  # every failure settles the execution, after its objects are removed
            db.session.rollback()  # a failed statement leaves the session unusable until rolled back
            code, detail = self._failure(exc)
            self._remove_own_leftovers()
            return self._fail(code, detail)
        try:
            self._deliver(package_id)
            self._notify_ready(package_id)
            export_execution.succeed(self.execution_id, self.attempt)
        except TransitionRefused:
            # The package is available and stays so; only the execution's settlement moved on.
            log.info(
                "workspace export %s attempt %s is no longer current after its package %s was made",
                self.execution_id,
                self.attempt,
                package_id,
            )
            return "superseded"
        log.info(
            "workspace export %s succeeded: package %s, %s rows, %s bytes, %s volumes",
            self.execution_id,
            package_id,
            self.counts.rows,
            self.counts.bytes,
            self.counts.volumes,
        )
        return "succeeded"

    def _resumed_package(self) -> int | None:
        """On a redelivered attempt: remove what earlier attempts left unpublished, and return the
        package an earlier attempt published (this attempt then only delivers and notifies), if any."""
        if self.attempt == 1:
            return None
        with self._fenced():
            remove_attempt_leftovers(self.storage, self.workspace_id, self.execution_id, range(1, self.attempt))
        package = db.session.scalars(
            select(ExportPackage).where(ExportPackage.execution_id == self.execution_id)
        ).first()
        if package is None:
            db.session.rollback()
            return None
        package_id = package.id
        self.counts = _Counts(
            rows_expected=package.row_count,
            rows=package.row_count,
            bytes=package.size_bytes,
            volumes=package.volumes_count,
        )
        with self._fenced():
            export_execution.log_event(
                self.execution_id,
                self.attempt,
                "warning",
                f"The previous attempt stopped after its package {package.uid} was made available; "
                "this attempt goes on from its delivery.",
                details={"package_id": package_id},
            )
        return package_id

    def _produce(self) -> int:
        with self._fenced():
            export_execution.enter_phase(self.execution_id, self.attempt, ExecutionPhase.SNAPSHOT)
        registry_version = verified_registry_version()
        datasets = packaged_datasets(self.snapshot_settings["datasets"])
        try:
            with open_snapshot(self.workspace_id) as snapshot:
                expected = self._take_snapshot(snapshot, datasets)
                manifest_datasets = self._write(snapshot, datasets, expected)
        except SQLAlchemyError as exc:
            if self.phase != ExecutionPhase.SNAPSHOT:
                raise
            log.error("workspace export %s: the snapshot could not be taken", self.execution_id, exc_info=exc)
            raise _PhaseFailure(
                "snapshot_failed",
                (
                    "The workspace's data could not be read in one consistent snapshot. Try again later; if it keeps "
                    f"failing, contact support with the reference “workspace export {self.execution_id}”."
                ),
            ) from exc
        return self._publish(snapshot.cutoff_at, manifest_datasets, registry_version)

    def _take_snapshot(self, snapshot: PackageSnapshot, datasets: list[PackagedDataset]) -> dict[str, int]:
        with self._fenced():
            export_execution.record_cutoff(self.execution_id, self.attempt, snapshot.cutoff_at)
        expected = {dataset.name: snapshot.count(dataset) for dataset in datasets}
        self.counts.rows_expected = sum(expected.values())
        with self._fenced():
            export_execution.record_progress(
                self.execution_id,
                self.attempt,
                datasets_count=len(datasets),
                rows_expected=self.counts.rows_expected,
                rows_written=0,
                bytes_written=0,
                volumes_count=0,
            )
            export_execution.finish_phase(
                self.execution_id,
                self.attempt,
                ExecutionPhase.SNAPSHOT,
                f"Snapshot taken at {snapshot.cutoff_at.isoformat()}: {len(datasets)} datasets, "
                f"{self.counts.rows_expected} rows.",
                details={"cutoff_at": snapshot.cutoff_at.isoformat(), "rows": expected},
            )
        return expected

    def _write(
        self, snapshot: PackageSnapshot, datasets: list[PackagedDataset], expected: dict[str, int]
    ) -> list[ManifestDataset]:
        self.phase = ExecutionPhase.WRITING
        with self._fenced():
            export_execution.enter_phase(self.execution_id, self.attempt, ExecutionPhase.WRITING)
        written = []
        for dataset in datasets:
            rows_before, bytes_before = self.counts.rows, self.counts.bytes

            def progress(rows: int, size: int, rows_before=rows_before, bytes_before=bytes_before) -> None:
                self.counts.rows, self.counts.bytes = rows_before + rows, bytes_before + size
                self._progress()

            parquet_schema = None
            if self.format == PackageFormat.PARQUET:
                volumes, parquet_schema = self._write_parquet(snapshot, dataset, progress)
            else:
                volumes = self._write_zipped(snapshot, dataset, progress)
            written.append(
                ManifestDataset(
                    name=dataset.name,
                    schema_version=dataset.declaration.schema_version,
                    content_hash=dataset.declaration.content_hash,
                    columns=dataset.declaration.columns,
                    volumes=[self._manifest_volume(volume) for volume in volumes],
                    parquet_schema=parquet_schema,
                )
            )
            if written[-1].row_count != expected[dataset.name]:
                # The snapshot cannot change under us; a difference is a bug, not a race.
                raise RuntimeError(
                    f"dataset {dataset.name}: counted {expected[dataset.name]} rows, wrote {written[-1].row_count}"
                )
        self._progress(force=True)
        with self._fenced():
            export_execution.finish_phase(
                self.execution_id,
                self.attempt,
                ExecutionPhase.WRITING,
                f"Wrote {self.counts.rows} rows in {self.counts.volumes} volumes ({self.counts.bytes} bytes).",
                details={"rows": self.counts.rows, "bytes": self.counts.bytes, "volumes": self.counts.volumes},
            )
        return written

    def _write_zipped(self, snapshot: PackageSnapshot, dataset: PackagedDataset, progress) -> list[VolumeResult]:
        encoder = encoder_for(self.format, dataset.column_names, dataset.column_types)
        source: Generator
        if self.format == PackageFormat.CSV and snapshot.can_copy:
            source = snapshot.csv_records(dataset)
            batches = record_batches(source)
        else:
            source = snapshot.batches(dataset)
            batches = encoded_batches(encoder, source)
        # Closed however the writing ends, so a failure mid-COPY ends the COPY before the
        # snapshot's transaction is rolled back.
        with contextlib.closing(source):
            return write_dataset_volumes(
                dataset=dataset.name,
                header=encoder.header,
                extension=encoder.extension,
                batches=batches,
                volume_size_bytes=int(self.snapshot_settings["volume_size_bytes"]),
                open_volume=functools.partial(_VolumeUpload, self, dataset.name),
                modified=snapshot.cutoff_at,
                progress=progress,
            )

    def _write_parquet(
        self, snapshot: PackageSnapshot, dataset: PackagedDataset, progress
    ) -> tuple[list[VolumeResult], list[dict]]:
        """The dataset's volumes and the Parquet schema they hold. On PostgreSQL the rows come from
        COPY as the CSV package's records and are parsed by pyarrow in native code (several times
        faster than converting typed rows in Python)."""
        # Imported here: pyarrow costs every process that loads it about 50 MB.
        from app.rendering.package.parquet_volumes import (
            arrow_schema,
            csv_record_batches,
            row_batches,
            schema_description,
            write_parquet_volumes,
        )

        schema = arrow_schema(dataset.column_shapes)
        source: Generator
        if snapshot.can_copy:
            source = snapshot.csv_records(dataset)
            batches = csv_record_batches(source, schema)
        else:
            source = snapshot.batches(dataset)
            batches = row_batches(source, schema)
        with contextlib.closing(source):
            volumes = write_parquet_volumes(
                dataset=dataset.name,
                columns=dataset.column_shapes,
                batches=batches,
                volume_size_bytes=int(self.snapshot_settings["volume_size_bytes"]),
                open_volume=functools.partial(_VolumeUpload, self, dataset.name),
                progress=progress,
            )
        return volumes, schema_description(dataset.column_shapes)

    def _manifest_volume(self, volume: VolumeResult) -> ManifestVolume:
        key = volume_key(self.prefix, volume.dataset, volume.sequence, self.format)
        return ManifestVolume(
            relative_to_package(key, self.prefix), volume.entry_name, volume.size_bytes, volume.row_count, volume.sha256
        )

    def _publish(self, cutoff_at, datasets: list[ManifestDataset], registry_version: int) -> int:
        self.phase = ExecutionPhase.UPLOADING
        with self._fenced():
            export_execution.enter_phase(self.execution_id, self.attempt, ExecutionPhase.UPLOADING)
        uid = str(uuid.uuid4())
        checksums = build_checksums((volume.key, volume.sha256) for dataset in datasets for volume in dataset.volumes)
        sums_key = checksums_key(self.prefix)
        self._ensure_current()
        self.storage.put_bytes(sums_key, checksums)
        manifest = build_manifest(
            package_uid=uid,
            execution_id=self.execution_id,
            workspace_id=self.workspace_id,
            cutoff_at=cutoff_at,
            created_at=utcnow(),
            format=self.format,
            datasets=datasets,
            registry_version=registry_version,
            checksums=ManifestChecksums(
                relative_to_package(sums_key, self.prefix), len(checksums), hashlib.sha256(checksums).hexdigest()
            ),
        )
        key = manifest_key(self.prefix)
        self._ensure_current()
        self.storage.put_bytes(key, manifest)
        with self._fenced():
            package = export_package.make_available(
                execution_id=self.execution_id,
                attempt=self.attempt,
                uid=uid,
                workspace_id=self.workspace_id,
                format=self.format,
                cutoff_at=cutoff_at,
                prefix=self.prefix,
                manifest_key=key,
                manifest_size=len(manifest),
                manifest_sha256=hashlib.sha256(manifest).hexdigest(),
                datasets_count=len(datasets),
                row_count=self.counts.rows,
                size_bytes=self.counts.bytes,
                volumes_count=self.counts.volumes,
                retention_days=int(self.snapshot_settings["retention_days"]),
            )
            package_id = package.id
            export_execution.finish_phase(
                self.execution_id,
                self.attempt,
                ExecutionPhase.UPLOADING,
                f"Manifest stored; package {uid} is available.",
                details={"package_id": package_id, "manifest_bytes": len(manifest)},
            )
        return package_id

    def _deliver(self, package_id: int) -> None:
        self.phase = ExecutionPhase.DELIVERING
        export_execution.enter_phase(self.execution_id, self.attempt, ExecutionPhase.DELIVERING)
        try:
            package_delivery.deliver_package(package_id, _DeliveryProgress(self, package_id))
        except Exception:  # the package is available; deliveries are retried on their own
            db.session.rollback()
            log.exception("workspace export %s: delivering package %s failed", self.execution_id, package_id)
            export_execution.log_event(
                self.execution_id,
                self.attempt,
                "warning",
                "The package is available, but starting its deliveries failed; they are retried later.",
                phase=ExecutionPhase.DELIVERING,
            )
        export_execution.finish_phase(self.execution_id, self.attempt, ExecutionPhase.DELIVERING, "Deliveries started.")

    def _notify_ready(self, package_id: int) -> None:
        self.phase = ExecutionPhase.NOTIFYING
        export_execution.enter_phase(self.execution_id, self.attempt, ExecutionPhase.NOTIFYING)
        try:
            notices = export_notices.notify(NoticeKind.PACKAGE_READY, "package", package_id, self.workspace_id)
        except Exception:  # recorded notices are sent again by the periodic retry
            db.session.rollback()
            log.exception("workspace export %s: notifying package %s failed", self.execution_id, package_id)
            export_execution.log_event(
                self.execution_id,
                self.attempt,
                "warning",
                "The package is available, but its notices could not all be sent; they are retried later.",
                phase=ExecutionPhase.NOTIFYING,
            )
            notices = 0
        export_execution.finish_phase(
            self.execution_id,
            self.attempt,
            ExecutionPhase.NOTIFYING,
            f"{notices} notices sent.",
            details={"notices_sent": notices},
        )

    # -- progress and fencing --------------------------------------------------------------------

    def _progress(self, force: bool = False) -> None:
        if not force and time.monotonic() - self.last_progress < self.interval:
            return
        with self._fenced():
            export_execution.record_progress(
                self.execution_id,
                self.attempt,
                rows_written=self.counts.rows,
                bytes_written=self.counts.bytes,
                volumes_count=self.counts.volumes,
            )
        self.last_progress = time.monotonic()

    @contextlib.contextmanager
    def _fenced(self):
        try:
            yield
        except TransitionRefused as exc:
            raise ExecutionAttemptSuperseded() from exc

    def _ensure_current(self) -> None:
        status, current = db.session.execute(
            select(ExportExecution.status, ExportExecution.attempt_count).where(ExportExecution.id == self.execution_id)
        ).one()
        db.session.rollback()
        if status != ExecutionStatus.RUNNING or current != self.attempt:
            raise ExecutionAttemptSuperseded()

    # -- failure -----------------------------------------------------------------------------------

    def _failure(self, exc: Exception) -> tuple[str, str]:
        reference = f"“workspace export {self.execution_id}”"
        if isinstance(exc, _PhaseFailure):
            return exc.code, exc.detail
        if isinstance(exc, DatasetNotCovered):
            return "dataset_not_covered", str(exc)
        if isinstance(exc, RegistryOutOfDate):
            log.error("workspace export %s: refused, %s", self.execution_id, exc)
            return "coverage_out_of_date", (
                "The export could not start: the list of datasets a package may carry is being updated on our "
                f"side. Export again later; if it keeps failing, contact support with the reference {reference}."
            )
        if isinstance(exc, VolumeTooSmall):
            return "volume_too_small", str(exc)
        if isinstance(exc, VolumeOverflow):
            log.error("workspace export %s: %s", self.execution_id, exc)
            return "volume_too_small", (
                "A Parquet volume came out larger than the volume size allows. Choose a larger volume size "
                f"and export again; if it keeps failing, contact support with the reference {reference}."
            )
        if isinstance(exc, StorageError):
            log.error("workspace export %s: storage refused the package: %s", self.execution_id, exc)
            return "storage_error", (
                "The package could not be stored: the storage service refused it. Try again later; if it keeps "
                f"failing, contact support with the reference {reference}."
            )
        if isinstance(exc, JobTimeoutException):
            return "timeout", "Producing the package took longer than the time a job is allowed."
        log.error(
            "workspace export %s: production failed unexpectedly in phase %s",
            self.execution_id,
            self.phase,
            exc_info=exc,
        )
        return "internal", (
            "Something went wrong while producing the package, and the error was logged. Export again; if it "
            f"fails again, contact support with the reference {reference}."
        )

    def _fail(self, code: str, detail: str) -> str:
        try:
            export_execution.fail(self.execution_id, self.attempt, code, detail)
        except TransitionRefused:
            log.info(
                "workspace export %s moved on before attempt %s could fail it with %s",
                self.execution_id,
                self.attempt,
                code,
            )
            return "superseded"
        log.info("workspace export %s failed: %s: %s", self.execution_id, code, detail)
        export_notices.notify_execution_failed(self.execution_id, self.workspace_id)
        return code

    def _remove_own_leftovers(self) -> None:
        for upload in list(self.open_uploads.values()):
            with contextlib.suppress(StorageError):
                upload.abort()
        self.open_uploads.clear()
        try:
            remove_attempt_leftovers(self.storage, self.workspace_id, self.execution_id, [self.attempt])
        except Exception:  # the watchdog's or a later attempt's clean-up tries again
            db.session.rollback()
            log.exception("workspace export %s: removing attempt %s's objects failed", self.execution_id, self.attempt)


class _VolumeUpload:
    """A volume's multipart upload: recorded before it opens, parts recorded as they go, completed
    (and the volume row with it) only while the attempt is current."""

    def __init__(self, production: _Production, dataset: str, sequence: int):
        self._production = production
        self._key = volume_key(production.prefix, dataset, sequence, production.format)
        with production._fenced():
            self._volume_id = export_volume.open_volume(
                production.execution_id, production.attempt, dataset, sequence, self._key
            )
        self._upload = production.storage.begin_upload(self._key)
        production.open_uploads[self._volume_id] = self._upload
        export_volume.record_upload(self._volume_id, self._upload.upload_id)
        self._part_size = production.storage.part_size
        self._buffer = bytearray()
        self._parts = 0

    def write(self, data: bytes) -> None:
        self._buffer += data
        while len(self._buffer) >= self._part_size:
            with memoryview(self._buffer) as view:
                part = bytes(view[: self._part_size])
            del self._buffer[: self._part_size]
            self._send(part)

    def _send(self, part: bytes) -> None:
        self._upload.upload_part(part)
        self._parts += 1
        export_volume.record_part(self._volume_id, self._parts, len(part))

    def close(self, volume: VolumeResult) -> None:
        if self._buffer:
            self._send(bytes(self._buffer))
            self._buffer.clear()
        production = self._production
        # Checked after the last part and before completing: a restart after this check aborts
        # the upload (or removes the object), so a stale attempt never leaves a volume behind.
        production._ensure_current()
        size = self._upload.complete()
        del production.open_uploads[self._volume_id]
        if size != volume.size_bytes:
            raise StorageError(f"volume {self._key}: stored {size} bytes, wrote {volume.size_bytes}")
        with production._fenced():
            export_volume.complete(
                self._volume_id,
                production.execution_id,
                production.attempt,
                size_bytes=size,
                sha256=volume.sha256,
                row_count=volume.row_count,
            )
        production.counts.volumes += 1


class _DeliveryProgress:
    """The delivering phase's progress: for each destination, bytes of the package copied so far,
    in the event log (its end always, and on the way at most every DELIVERY_EVENT_SECONDS) and
    in the execution's heartbeat. It never raises: a copy is the delivery's own work, fenced by
    the delivery's attempt, and goes on even when this execution attempt was superseded."""

    def __init__(self, production: _Production, package_id: int):
        self._production = production
        package = db.session.get_one(ExportPackage, package_id)
        checksums = package_delivery.stored_checksums_key(package)
        checksums_size = production.storage.size(checksums) if checksums else 0
        self._total = package.size_bytes + checksums_size + package.manifest_size
        self._last_event: dict[int, float] = {}
        self._stopped = False

    def __call__(self, delivery_id: int, copied: int) -> None:
        now = time.monotonic()
        last = self._last_event.setdefault(delivery_id, now)
        if self._stopped or (copied < self._total and now - last < DELIVERY_EVENT_SECONDS):
            return
        self._last_event[delivery_id] = now
        production = self._production
        try:
            destination_id, name = db.session.execute(
                select(ExportDestination.id, ExportDestination.name)
                .join(ExportDelivery, ExportDelivery.destination_id == ExportDestination.id)
                .where(ExportDelivery.id == delivery_id)
            ).one()
            export_execution.log_event(
                production.execution_id,
                production.attempt,
                "counts",
                f"Copied {copied:,} of {self._total:,} bytes ({100 * copied // max(self._total, 1)}%) to “{name}”.",
                phase=ExecutionPhase.DELIVERING,
                details={
                    "delivery_id": delivery_id,
                    "destination_id": destination_id,
                    "bytes_copied": copied,
                    "bytes_total": self._total,
                },
            )
        except TransitionRefused:
            self._stopped = True
            log.info(
                "workspace export %s attempt %s: no longer current; delivery progress stops being recorded",
                production.execution_id,
                production.attempt,
            )
        except Exception:  # progress is a report; the copy matters more
            db.session.rollback()
            log.exception(
                "workspace export %s: recording delivery %s's progress failed", production.execution_id, delivery_id
            )
