"""What a failed workspace-export production records: a code, and a sentence a person can read.

Never SQL or a stack trace: those go to the log with the execution id, and the sentence gives
the person the reference to quote to support.
"""

from __future__ import annotations

import logging

from rq.timeouts import JobTimeoutException

from app.data.package_snapshot import DatasetNotCovered
from app.models.export_execution import ExecutionFailure, ExecutionPhase
from app.rendering.package.volumes import VolumeOverflow, VolumeTooSmall
from app.services.workspace_export.coverage import RegistryOutOfDate
from app.storage import StorageError, StorageFull

log = logging.getLogger(__name__)


class PhaseFailure(Exception):
    """A failure with its code and the sentence a person reads.

    Outside DomainError: a signal inside the job, from a phase to the execution's settlement."""

    def __init__(self, code: ExecutionFailure, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


def snapshot_failed(execution_id: int) -> PhaseFailure:
    """The failure of a snapshot the database could not take."""
    return PhaseFailure(
        ExecutionFailure.SNAPSHOT_FAILED,
        (
            "The workspace's data could not be read in one consistent snapshot. Try again later; if it keeps "
            f"failing, contact support with the reference “workspace export {execution_id}”."
        ),
    )


def recorded_failure(exc: Exception, execution_id: int, phase: ExecutionPhase) -> tuple[ExecutionFailure, str]:
    """The failure code and the sentence execution `execution_id` records for `exc`, raised in `phase`."""
    reference = f"“workspace export {execution_id}”"
    if isinstance(exc, PhaseFailure):
        return exc.code, exc.detail
    if isinstance(exc, DatasetNotCovered):
        return ExecutionFailure.DATASET_NOT_COVERED, str(exc)
    if isinstance(exc, RegistryOutOfDate):
        log.error("workspace export %s: refused, %s", execution_id, exc)
        return ExecutionFailure.COVERAGE_OUT_OF_DATE, (
            "The export could not start: the list of datasets a package may carry is being updated on our "
            f"side. Export again later; if it keeps failing, contact support with the reference {reference}."
        )
    if isinstance(exc, VolumeTooSmall):
        return ExecutionFailure.VOLUME_TOO_SMALL, str(exc)
    if isinstance(exc, VolumeOverflow):
        log.error("workspace export %s: %s", execution_id, exc)
        return ExecutionFailure.VOLUME_TOO_SMALL, (
            "A Parquet volume came out larger than the volume size allows. Choose a larger volume size "
            f"and export again; if it keeps failing, contact support with the reference {reference}."
        )
    if isinstance(exc, StorageFull):
        log.error("workspace export %s: storage is full: %s", execution_id, exc)
        return ExecutionFailure.STORAGE_FULL, (
            "The package could not be stored: the file storage is full. Nothing is wrong with your settings; "
            f"export again once space has been freed (our staff are told). The reference is {reference}."
        )
    if isinstance(exc, StorageError):
        log.error("workspace export %s: storage refused the package: %s", execution_id, exc)
        return ExecutionFailure.STORAGE_ERROR, (
            "The package could not be stored: the storage service refused it. Try again later; if it keeps "
            f"failing, contact support with the reference {reference}."
        )
    if isinstance(exc, JobTimeoutException):
        return ExecutionFailure.TIMEOUT, "Producing the package took longer than the time a job is allowed."
    log.error(
        "workspace export %s: production failed unexpectedly in phase %s",
        execution_id,
        phase,
        exc_info=exc,
    )
    return ExecutionFailure.INTERNAL, (
        "Something went wrong while producing the package, and the error was logged. Export again; if it "
        f"fails again, contact support with the reference {reference}."
    )
