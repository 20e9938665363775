"""What the workspace export pages read: executions with their event logs, packages with their
volumes and deliveries, and the stored bytes of a package for download.

Every read names the workspace: an id of another workspace's execution or package finds nothing.
The pages are for administrators only (app/blueprints/packages): `get_execution` and
`get_package`, the loaders the routes give `visible_or_404`, find nothing for anyone else. The
staff console reads an execution's package and a workspace's settings here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Select, String, cast, func, literal, select
from sqlalchemy.orm import selectinload

from app.domain.errors import Conflict
from app.domain.people.access import RequesterContext
from app.extensions import db
from app.models import Person
from app.models.export_execution import PLATFORM_FAILURE_CODES, ExecutionFailure, ExportExecution, ExportJobEvent
from app.models.export_package import ExportPackage, ExportVolume, PackageStatus, VolumeStatus
from app.models.export_settings import PACKAGE_FORMAT_LABELS, ExportSettings
from app.models.package_delivery import DeliveryStatus, ExportDelivery, FailureClass
from app.models.types import utcnow
from app.services.pages.list_pages import (
    ListFilter,
    ListRequest,
    ListSpec,
    Page,
    newest_first,
    oldest_first,
    page_of,
)
from app.services.pages.stored_download import Download, stored_download
from app.services.workspace_export.package_delivery import stored_checksums_key
from app.storage.base import check_key_under

RECENT_EXECUTIONS = 20
# The overview shows the newest few; the package list has them all.
RECENT_PACKAGES = 5
PACKAGE_LIST = ListSpec(
    name="packages",
    sorts={
        "newest": newest_first(ExportPackage.created_at, ExportPackage.id),
        "oldest": oldest_first(ExportPackage.created_at, ExportPackage.id),
    },
    filters={
        "status": ListFilter(
            "Status",
            {PackageStatus.AVAILABLE: "Available", PackageStatus.EXPIRED: "Expired", PackageStatus.DELETED: "Deleted"},
        ),
        "format": ListFilter("Format", PACKAGE_FORMAT_LABELS),
    },
    # Who pressed Export now, the cadence period ("weekly:2026-W49") the export was for, the
    # package as its page names it ("Package 12"), and its identifier (a prefix is enough).
    search_columns=(
        Person.name,
        ExportExecution.cadence_key,
        literal("Package ", String) + cast(ExportPackage.id, String),
        ExportPackage.uid,
    ),
)
EVENT_LOG_LIMIT = 500

# Werkzeug adds "; charset=utf-8" to the text types, to a presigned URL's type and to a sent file's.
MIME_TYPES = {
    "manifest": "application/json",
    "checksums": "text/plain",
    "zip": "application/zip",
    "parquet": "application/vnd.apache.parquet",
}

# One readable sentence per failure code an execution may end with; the detail follows it, and
# whose failure it was (PLATFORM_FAILURE_CODES) says whether it used one of the allowance.
FAILURE_SENTENCES = {
    ExecutionFailure.STALLED: "The worker producing the export stopped at every attempt it was given, so it was "
    "given up.",
    ExecutionFailure.STOPPED_BY_STAFF: "Rhythm staff stopped the export.",
    ExecutionFailure.STORAGE_ERROR: "The package could not be written to storage.",
    ExecutionFailure.STORAGE_FULL: "The file storage was full; export again once space has been freed.",
    ExecutionFailure.SNAPSHOT_FAILED: "The consistent snapshot of the workspace's data could not be taken.",
    ExecutionFailure.TIMEOUT: "The export took longer than a job may run and was stopped.",
    ExecutionFailure.COVERAGE_OUT_OF_DATE: "The list of datasets a package may carry was being updated on our side.",
    ExecutionFailure.INTERNAL: "Something went wrong on our side; the error was logged.",
    ExecutionFailure.DATASET_NOT_COVERED: "A dataset the settings include is no longer covered by workspace export.",
    ExecutionFailure.VOLUME_TOO_SMALL: "The volume size is too small for the rows of a dataset.",
}
OUR_FAILURE = (
    "The failure was ours: it does not count against the export allowance, and the workspace can export again."
)
CUSTOMER_FAILURE = "It counts against the export allowance: change the export settings before exporting again."
UNKNOWN_FAILURE = "The export could not be completed."
# A delivery's last failure, in words, by its class.
DELIVERY_FAILURE_WORDS = {
    FailureClass.TRANSIENT: "The copy failed for a passing reason; it is tried again on its own",
    FailureClass.PERMANENT: "The copy failed and is not tried again on its own: fix the destination, then retry",
}
# The same for a webhook or Slack destination, which is sent a message rather than a copy.
MESSAGE_FAILURE_WORDS = {
    FailureClass.TRANSIENT: "The message was not taken, for a passing reason; it is sent again on its own",
    FailureClass.PERMANENT: "The message was refused and is not sent again on its own: fix the destination, then retry",
}


class PackageUnavailable(Conflict):
    """The package's bytes cannot be downloaded: it is expired or deleted (its status says which),
    or (`missing`) it was made before packages carried SHA256SUMS; the message says so to the person."""

    SENTENCES = {
        "missing": "This package was made before packages carried SHA256SUMS; check its volumes against the manifest.",
        PackageStatus.DELETED: "This package was deleted; its files are gone. Export again to get the data.",
    }
    EXPIRED = "This package has expired; its files are gone. Export again to get the data."

    def __init__(self, status: str):
        super().__init__(self.SENTENCES.get(status, self.EXPIRED))
        self.status = status


def failure_sentence(code: str | None) -> str:
    """What the failure `code` was, and whether it used one of the allowance."""
    if code not in FAILURE_SENTENCES:
        return UNKNOWN_FAILURE
    side = OUR_FAILURE if code in PLATFORM_FAILURE_CODES else CUSTOMER_FAILURE
    return f"{FAILURE_SENTENCES[ExecutionFailure(code)]} {side}"


def settings_of(workspace_id: int) -> ExportSettings | None:
    return db.session.scalar(select(ExportSettings).where(ExportSettings.workspace_id == workspace_id))


def recent_executions(workspace_id: int, limit: int = RECENT_EXECUTIONS) -> list[ExportExecution]:
    return list(
        db.session.scalars(
            select(ExportExecution)
            .where(ExportExecution.workspace_id == workspace_id)
            .order_by(ExportExecution.created_at.desc(), ExportExecution.id.desc())
            .limit(limit)
        )
    )


def get_execution(access: RequesterContext, execution_id: int) -> ExportExecution | None:
    """An execution of the person's workspace, for its administrators; None otherwise."""
    if not access.is_admin:
        return None
    return db.session.scalar(
        select(ExportExecution).where(
            ExportExecution.id == execution_id, ExportExecution.workspace_id == access.workspace_id
        )
    )


def execution_events(execution: ExportExecution, limit: int = EVENT_LOG_LIMIT) -> list[ExportJobEvent]:
    """The event log, oldest first (the newest `limit` events when there are more)."""
    newest = db.session.scalars(
        select(ExportJobEvent)
        .where(ExportJobEvent.execution_id == execution.id)
        .order_by(ExportJobEvent.id.desc())
        .limit(limit)
    ).all()
    return list(reversed(newest))


def package_of(execution: ExportExecution) -> ExportPackage | None:
    return db.session.scalar(select(ExportPackage).where(ExportPackage.execution_id == execution.id))


def requester_name(execution: ExportExecution) -> str | None:
    """Who pressed Export now; None for the cadence's executions."""
    if execution.requested_by_id is None:
        return None
    requester = db.session.get(Person, execution.requested_by_id)
    return requester.name if requester else None


def read_afresh() -> None:
    """Load every row this request read again on its next read: the page drawn after a refused
    action shows what another process changed meanwhile (why it was refused), not the rows as the
    request first loaded them."""
    db.session.expire_all()


@dataclass(frozen=True)
class PackageListing:
    """A package as the lists show it, with how its export started: Export now (and by whom) or the cadence."""

    package: ExportPackage
    trigger: str
    cadence_key: str | None
    started_by: str | None
    # Its deliveries whose last attempt failed (waiting for a retry, or failed for good).
    failed_deliveries: int


def _failed_deliveries(package_id) -> Select:
    """Counts the package's deliveries that failed; `package_id` a value or the listed package's column."""
    return (
        select(func.count())
        .select_from(ExportDelivery)
        .where(ExportDelivery.package_id == package_id, ExportDelivery.status == DeliveryStatus.FAILED)
    )


def _failed_deliveries_count():
    return _failed_deliveries(ExportPackage.id).correlate(ExportPackage).scalar_subquery()


def _listing_select(workspace_id: int) -> Select:
    return (
        select(
            ExportPackage,
            ExportExecution.trigger,
            ExportExecution.cadence_key,
            Person.name,
            _failed_deliveries_count().label("failed_deliveries"),
        )
        .join(ExportExecution, ExportExecution.id == ExportPackage.execution_id)
        .outerjoin(Person, Person.id == ExportExecution.requested_by_id)
        .where(ExportPackage.workspace_id == workspace_id)
    )


def _newest_first(statement: Select, limit: int) -> list[PackageListing]:
    rows = db.session.execute(statement.order_by(ExportPackage.created_at.desc(), ExportPackage.id.desc()).limit(limit))
    return [PackageListing(*row) for row in rows]


def recent_packages(workspace_id: int, limit: int = RECENT_PACKAGES) -> list[PackageListing]:
    return _newest_first(_listing_select(workspace_id), limit)


def packages_with_failed_deliveries(workspace_id: int, limit: int = RECENT_PACKAGES) -> list[PackageListing]:
    """The newest available packages a delivery of which failed: what the Overview asks an
    administrator to look at (an expired or deleted package can no longer be delivered)."""
    statement = _listing_select(workspace_id).where(
        ExportPackage.status == PackageStatus.AVAILABLE, _failed_deliveries_count() > 0
    )
    return _newest_first(statement, limit)


def failed_deliveries_of(package: ExportPackage) -> int:
    """How many of the package's deliveries failed, for its export's page."""
    return db.session.scalar(_failed_deliveries(package.id)) or 0


def page_packages(workspace_id: int, request: ListRequest) -> Page:
    """One page of the workspace's packages, searched (who started the export, its cadence period,
    "Package N", its identifier), filtered (status, format) and ordered as asked."""
    statement = _listing_select(workspace_id)
    if "status" in request.filters:
        statement = statement.where(ExportPackage.status == request.filters["status"])
    if "format" in request.filters:
        statement = statement.where(ExportPackage.format == request.filters["format"])
    page = page_of(PACKAGE_LIST, request, statement)
    return page.with_rows([PackageListing(*row) for row in page.rows])


def get_package(access: RequesterContext, package_id: int) -> ExportPackage | None:
    """A package of the person's workspace, for its administrators; None otherwise."""
    if not access.is_admin:
        return None
    return db.session.scalar(
        select(ExportPackage).where(ExportPackage.id == package_id, ExportPackage.workspace_id == access.workspace_id)
    )


def package_volumes(package: ExportPackage) -> list[ExportVolume]:
    """The package's complete volumes: those of the attempt that stored its manifest (under its prefix)."""
    return list(
        db.session.scalars(
            select(ExportVolume)
            .where(
                ExportVolume.execution_id == package.execution_id,
                ExportVolume.status == VolumeStatus.COMPLETE,
                ExportVolume.key.startswith(package.prefix, autoescape=True),
            )
            .order_by(ExportVolume.dataset, ExportVolume.sequence)
        )
    )


def package_datasets(volumes: list[ExportVolume]) -> list[tuple[str, int]]:
    """Each dataset of the package with its row count, in the volumes' order."""
    rows: dict[str, int] = {}
    for volume in volumes:
        rows[volume.dataset] = rows.get(volume.dataset, 0) + (volume.row_count or 0)
    return list(rows.items())


def package_deliveries(package: ExportPackage) -> list[ExportDelivery]:
    """Every delivery of the package (superseded ones too, as history) with its attempts and destination."""
    return list(
        db.session.scalars(
            select(ExportDelivery)
            .where(ExportDelivery.package_id == package.id)
            .options(selectinload(ExportDelivery.attempts), selectinload(ExportDelivery.destination))
            .order_by(ExportDelivery.destination_id, ExportDelivery.id)
        )
    )


def find_delivery(package: ExportPackage, delivery_id: int) -> ExportDelivery | None:
    return db.session.scalar(
        select(ExportDelivery).where(ExportDelivery.id == delivery_id, ExportDelivery.package_id == package.id)
    )


def deliverable(package: ExportPackage) -> bool:
    """Whether an administrator may still ask for a delivery of the package: it is available
    inside its retention deadline (the sweep may not have expired a package just past it yet)."""
    return package.status == PackageStatus.AVAILABLE and package.expires_at > utcnow()


def open_manifest(package: ExportPackage) -> Download:
    _require_available(package)
    return stored_download(
        check_key_under(package.manifest_key, package.prefix),
        f"workspace-{package.workspace_id}-package-{package.id}-manifest.json",
        MIME_TYPES["manifest"],
    )


def open_checksums(package: ExportPackage) -> Download:
    """The package's SHA256SUMS; PackageUnavailable("missing") for a package made before packages
    carried one."""
    _require_available(package)
    key = stored_checksums_key(package)
    if key is None:
        raise PackageUnavailable("missing")
    return stored_download(key, "SHA256SUMS", MIME_TYPES["checksums"])


def find_volume(package: ExportPackage, volume_id: int) -> ExportVolume | None:
    return next((volume for volume in package_volumes(package) if volume.id == volume_id), None)


def open_volume(package: ExportPackage, volume: ExportVolume) -> Download:
    _require_available(package)
    key = check_key_under(volume.key, package.prefix)
    return stored_download(key, key.rsplit("/", 1)[-1], MIME_TYPES["parquet" if key.endswith(".parquet") else "zip"])


def _require_available(package: ExportPackage) -> None:
    """Only an available package inside its retention deadline is served (the sweep may not have
    expired a package just past it yet)."""
    if package.status != PackageStatus.AVAILABLE:
        raise PackageUnavailable(package.status)
    if package.expires_at <= utcnow():
        raise PackageUnavailable(PackageStatus.EXPIRED)
