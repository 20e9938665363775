"""Delivering packages to their workspace's destinations (seed 000, DESIGN section 8).

`create_deliveries` makes one row per live destination (withheld when the destination is
disabled); `run_delivery` makes one attempt: start it (the attempt number is allocated under the
row's lock, so two workers on one delivery make one transfer), copy every volume, then
SHA256SUMS, then the manifest from the product's storage to

    <destination path>/workspace-<workspace id>/<package time, YYYYMMDDTHHMMSSZ>/<key under the package prefix>

streaming, and record the outcome. A webhook or Slack destination receives no file: it is told
the package is ready, with its volumes' names, rows, sizes and SHA-256 and a link to the
package's page (`_announce`), and records the location ANNOUNCED. A transient failure is
retried with a backoff (the work engine's periodic dispatch enqueues it when due); after the last
retry, or on a permanent failure, the row stays failed and a DELIVERY_FAILED notice goes out. A
worker that died mid-attempt loses its lease and the engine fails its attempt as transient
`worker_stopped`. The kind's declaration, from which the engine dispatches it, watches its lease
and requeues it for staff, is
app/services/workspace_export/delivery_work.py.

A workspace administrator may Retry a failed delivery (`retry`) and Deliver a withheld one whose
destination is enabled again (`deliver_withheld`), while the package is inside its retention;
each is audited and dispatched at once, and its attempts are appended to the row's history.
Staff with `staff.execute` may supersede a failed delivery and start its replacement
(`supersede_and_replace`), audited with their reason in the same transaction.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime

from sqlalchemy import select

from app.destinations import (
    DeliveryFailure,
    DestinationStore,
    PackageReady,
    VolumeFacts,
    announce_package,
    classify_error,
    open_destination,
)
from app.domain.errors import TransitionRefused
from app.domain.timing.retry_policy import COPY_TO_A_DESTINATION
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models.export_destination import ANNOUNCING_KINDS, ExportDestination
from app.models.export_notice import NoticeKind
from app.models.export_package import ExportPackage, ExportVolume, PackageStatus, VolumeStatus
from app.models.package_delivery import DeliveryStatus, ExportDelivery, FailureClass
from app.models.types import Moment, utcnow
from app.models.workspace import Workspace
from app.services.pages.public_link_tokens import public_link
from app.services.work import leases
from app.services.workspace_export import export_notices
from app.services.workspace_export.package_keys import checksums_key
from app.storage import check_key_under, get_storage

log = logging.getLogger(__name__)

RETRIES_EXHAUSTED = "retries_exhausted"
PACKAGE_WITHDRAWN = "package_withdrawn"
WORKER_STOPPED = "worker_stopped"
# The location a webhook or Slack delivery records: it was told, with a link, and holds no file.
ANNOUNCED = "announced"
_CANNOT_START = (DeliveryStatus.DELIVERED, DeliveryStatus.SUPERSEDED, DeliveryStatus.EXPIRED, DeliveryStatus.WITHHELD)


# Creating


def create_deliveries(package_id: int) -> list[int]:
    """One delivery per live (not removed) destination of the package's workspace: pending, or
    withheld when the destination is disabled. Rows made earlier (a repeated call) are kept.
    Returns the package's live delivery ids, in destination order. Committed."""
    package = db.session.get(ExportPackage, package_id)
    if package is None:
        raise ValueError(f"package {package_id} does not exist")
    destinations = db.session.scalars(
        select(ExportDestination)
        .where(ExportDestination.workspace_id == package.workspace_id, ExportDestination.removed_at.is_(None))
        .order_by(ExportDestination.id)
    ).all()
    ids = []
    for destination in destinations:
        delivery_id = package_delivery_lifecycle.create(
            workspace_id=package.workspace_id, package_id=package.id, destination_id=destination.id
        )
        if delivery_id is None:  # made earlier, by an earlier call or another process
            delivery_id = _live_delivery(package.id, destination.id)
        elif not destination.enabled:
            package_delivery_lifecycle.withhold(delivery_id)
        ids.append(delivery_id)
    db.session.commit()
    return [delivery_id for delivery_id in ids if delivery_id is not None]


def _live_delivery(package_id: int, destination_id: int) -> int | None:
    return db.session.scalar(
        select(ExportDelivery.id).where(
            ExportDelivery.package_id == package_id,
            ExportDelivery.destination_id == destination_id,
            ExportDelivery.status != DeliveryStatus.SUPERSEDED,
        )
    )


# Told (delivery id, bytes of the package copied so far) as a delivery's copy goes on; it must not raise.
CopyProgress = Callable[[int, int], None]


def deliver_package(package_id: int, progress: CopyProgress | None = None) -> None:
    """Create the package's deliveries and run each pending one once (the execution's
    `delivering` phase), telling `progress` how far each copy got. Failures are recorded on the
    rows, never raised: retries and notices follow from there."""
    for delivery_id in create_deliveries(package_id):
        outcome = run_delivery(delivery_id, progress=progress)
        log.info("package %s: delivery %s %s", package_id, delivery_id, outcome)


# One attempt


def relative_key(package: ExportPackage, key: str) -> str:
    """Where a package object lands under the destination's path."""
    prefix = package.prefix.rstrip("/") + "/"
    check_key_under(key, prefix)
    moment = package.created_at.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"workspace-{package.workspace_id}/{moment}/{key[len(prefix) :]}"


def package_folder(package: ExportPackage) -> str:
    """The folder a delivery writes the package into, under the destination's path (where its manifest lands)."""
    return relative_key(package, package.manifest_key).rsplit("/", 1)[0] + "/"


def stored_checksums_key(package: ExportPackage) -> str | None:
    """The package's SHA256SUMS, or None for a package made before packages carried one."""
    key = checksums_key(package.prefix.rstrip("/") + "/")
    return key if get_storage().exists(key) else None


def package_keys(package: ExportPackage) -> list[str]:
    """Every complete volume of the package (under its prefix, so of the attempt that made it),
    then SHA256SUMS, then the manifest, which goes last: a manifest at the destination means the
    volumes and their checksums are there."""
    prefix = package.prefix.rstrip("/") + "/"
    keys = [volume.key for volume in _complete_volumes(package)]
    checksums = stored_checksums_key(package)
    keys += [checksums] if checksums else []
    return [check_key_under(key, prefix) for key in keys] + [check_key_under(package.manifest_key, prefix)]


def _complete_volumes(package: ExportPackage) -> list[ExportVolume]:
    """The package's complete volumes under its prefix (so of the attempt that made it), in order."""
    prefix = package.prefix.rstrip("/") + "/"
    volumes = db.session.scalars(
        select(ExportVolume)
        .where(ExportVolume.execution_id == package.execution_id, ExportVolume.status == VolumeStatus.COMPLETE)
        .order_by(ExportVolume.dataset, ExportVolume.sequence, ExportVolume.id)
    ).all()
    return [volume for volume in volumes if volume.key.startswith(prefix)]


def run_delivery(delivery_id: int, now: datetime | None = None, progress: CopyProgress | None = None) -> str:
    """One attempt at the delivery; returns one word describing the outcome, for logs."""
    delivery = db.session.get(ExportDelivery, delivery_id, populate_existing=True)
    if delivery is None:
        return "missing"
    if delivery.status in _CANNOT_START:
        return f"already_{delivery.status}"
    package = db.session.get_one(ExportPackage, delivery.package_id)
    if package.status != PackageStatus.AVAILABLE:
        return _expire_for_package(delivery)
    destination = db.session.get_one(ExportDestination, delivery.destination_id)
    if not destination.enabled or destination.removed_at is not None:
        # Disabled since the row was made: a pending delivery is withheld; a failed one waits,
        # its retry not dispatched while the destination stays disabled.
        if delivery.status != DeliveryStatus.PENDING:
            return "destination_disabled"
        try:
            package_delivery_lifecycle.withhold(delivery.id)
            db.session.commit()
        except TransitionRefused:
            return "not_due"
        return "withheld"
    try:
        attempt = package_delivery_lifecycle.start(delivery_id, leases.holder_name(), leases.lease_expiry(), now=now)
    except TransitionRefused:
        # Another worker has it, it settled, its retry time has not come, or its package is past its
        # retention (the sweep expires both).
        return "not_due"

    def renew(lease_expires_at: Moment) -> None:
        package_delivery_lifecycle.renew_lease(delivery_id, attempt, lease_expires_at)

    def still_current() -> None:
        renew(leases.lease_expiry())

    with leases.renewed_while_running(renew, f"package delivery {delivery_id}"):
        try:
            if destination.kind in ANNOUNCING_KINDS:
                location = _announce(package, destination)
            else:
                location = _transfer(
                    package, destination, still_current, functools.partial(progress, delivery_id) if progress else None
                )
        except TransitionRefused:
            db.session.rollback()
            log.warning("package delivery %s attempt %s is stale: it stopped copying", delivery_id, attempt)
            return "stale"
        except Exception as exc:  # every failure is classified and recorded on the row
            failure = classify_error(exc)
            if failure.code == "unexpected_error":
                log.exception("package delivery %s attempt %s failed unexpectedly", delivery_id, attempt)
            else:
                # The log, unlike the summary a customer reads, names the stored object.
                log.warning(
                    "package delivery %s attempt %s failed: %s (%s)", delivery_id, attempt, failure.summary, exc
                )
            db.session.rollback()
            if _package_settled(package.id):
                return _withdrawn(delivery, attempt)
            return record_failure(delivery, attempt, failure)
    try:
        package_delivery_lifecycle.delivered(delivery_id, attempt, location)
    except TransitionRefused:
        return "stale"
    return "delivered"


def _transfer(
    package: ExportPackage,
    destination: ExportDestination,
    still_current: Callable[[], None],
    copied: Callable[[int], None] | None = None,
) -> str:
    """Copy the volumes, then SHA256SUMS and the manifest, telling `copied` the bytes copied so far. `still_current`
    raises TransitionRefused once this attempt is no longer the delivery's: it is asked before each
    object, so a stale attempt writes nothing more. A copy that stops part-way removes the package's
    objects from the destination, so it never holds volumes without their manifest."""
    storage = get_storage()
    store = open_destination(destination)
    copies = [(key, relative_key(package, key)) for key in package_keys(package)]
    db.session.rollback()  # no transaction stays open during the copy
    total = 0

    def counted(chunks: Iterable[bytes]) -> Iterator[bytes]:
        nonlocal total
        for chunk in chunks:
            yield chunk
            total += len(chunk)
            if copied is not None:
                copied(total)

    try:
        for key, target in copies:
            still_current()
            store.put_stream(target, counted(storage.read_chunks(key)))
    except BaseException:
        if _still_ours(still_current):
            remove_objects(store, [target for _, target in copies])
        raise
    finally:
        store.close()
    return store.location(package_folder(package).rstrip("/")) + "/"


def _announce(package: ExportPackage, destination: ExportDestination) -> str:
    """Tell a webhook or Slack destination that the package is ready, with its volumes' facts and a
    link to its page, where administrators download it: such a destination receives no files."""
    prefix = package.prefix.rstrip("/") + "/"
    volumes = tuple(
        VolumeFacts(volume.key[len(prefix) :], volume.row_count or 0, volume.size_bytes or 0, volume.sha256 or "")
        for volume in _complete_volumes(package)
    )
    ready = PackageReady(
        message_id=f"package-{package.id}-destination-{destination.id}",
        workspace_name=db.session.get_one(Workspace, package.workspace_id).name,
        package_id=package.id,
        cutoff_at=package.cutoff_at,
        format=package.format,
        rows=package.row_count,
        size_bytes=package.size_bytes,
        volumes=volumes,
        package_url=public_link(f"/w/{package.workspace_id}/export/packages/{package.id}"),
        expires_at=package.expires_at,
    )
    db.session.rollback()  # no transaction stays open while the receiver answers
    announce_package(destination, ready)
    return ANNOUNCED


def _still_ours(still_current: Callable[[], None]) -> bool:
    """Whether this attempt may still touch the destination: once a newer attempt took the
    delivery over, the same names are that attempt's objects."""
    try:
        still_current()
    except Exception:  # refused, or the database did not answer: leave the objects alone
        db.session.rollback()
        return False
    return True


def remove_objects(store: DestinationStore, targets: list[str]) -> None:
    """Delete the package's objects at the destination, the manifest first, including those an
    earlier attempt killed mid-copy left behind. Best effort: the copy's own failure is the one
    recorded; the first delete the store refuses stops it (a store that is down refuses the rest
    too), and the next attempt writes the same names again."""
    for target in reversed(targets):
        try:
            store.delete(target)
        except Exception:
            log.exception("an interrupted package copy could not remove %s from its destination", target)
            return


def _package_settled(package_id: int) -> bool:
    status = db.session.scalar(select(ExportPackage.status).where(ExportPackage.id == package_id))
    db.session.rollback()
    return status != PackageStatus.AVAILABLE


def _withdrawn(delivery: ExportDelivery, attempt: int) -> str:
    """The package was deleted or expired under an attempt whose lease had lapsed (deletion
    waits for a live copy): no "not delivered" notice, and the delivery expires with its package."""
    failure = DeliveryFailure(
        FailureClass.PERMANENT,
        PACKAGE_WITHDRAWN,
        "The package was deleted or expired before this copy finished; what the copy had written was removed.",
    )
    outcome = record_failure(delivery, attempt, failure, notify=False)
    if outcome == "stale":
        return outcome
    return _expire_for_package(delivery)


def record_failure(
    delivery: ExportDelivery,
    attempt: int,
    failure: DeliveryFailure,
    now: datetime | None = None,
    lease_lapsed_before: datetime | None = None,
    notify: bool = True,
    retry_at: datetime | None = None,
) -> str:
    """Fail the attempt; a transient failure waits for its retry (at `retry_at` when the engine
    chose it, else after the policy's delay), or, after the last, becomes the permanent
    `retries_exhausted`. A permanent failure notifies, unless told not to."""
    now = now or utcnow()
    failure_class, code, summary = FailureClass(failure.failure_class), failure.code, failure.summary
    next_attempt_at = None
    if failure_class == FailureClass.TRANSIENT:
        if COPY_TO_A_DESTINATION.exhausted(attempt):
            failure_class, code = FailureClass.PERMANENT, RETRIES_EXHAUSTED
            summary = f"Gave up after {attempt} attempts; the last one: {summary}"
        else:
            next_attempt_at = retry_at or now + COPY_TO_A_DESTINATION.delay_after(attempt)
    try:
        package_delivery_lifecycle.failed(
            delivery.id,
            attempt,
            failure_class,
            code,
            summary,
            next_attempt_at,
            now=now,
            lease_lapsed_before=lease_lapsed_before,
        )
    except TransitionRefused:
        return "stale"
    if failure_class == FailureClass.PERMANENT:
        if notify:
            export_notices.notify(NoticeKind.DELIVERY_FAILED, "delivery", delivery.id, delivery.workspace_id)
        return "failed"
    return "retry_later"


def _expire_for_package(delivery: ExportDelivery) -> str:
    try:
        package_delivery_lifecycle.expire(delivery.id)
        db.session.commit()
    except TransitionRefused:
        db.session.rollback()
        return "not_due"
    return "expired"
