"""Delivering packages to their workspace's destinations (seed 000, DESIGN section 8).

`create_deliveries` makes one row per live destination (withheld when the destination is
disabled); `run_delivery` makes one attempt: start it (the attempt number is allocated under the
row's lock, so two workers on one delivery make one transfer), copy every volume, then
SHA256SUMS, then the manifest from the product's storage to

    <destination path>/workspace-<workspace id>/<package time, YYYYMMDDTHHMMSSZ>/<key under the package prefix>

streaming, and record the outcome. A transient failure is retried with a backoff (the periodic
`dispatch_due` enqueues it when due); after the last retry, or on a permanent failure, the row
stays failed and a DELIVERY_FAILED notice goes out. A worker that died mid-attempt loses its
lease and the engine fails its attempt as transient `worker_stopped` (`retry_lapsed_later`). The work engine runs
these turns (the kind's spec is `app.services.work.kinds.DELIVERIES`).

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
from datetime import UTC, datetime, timedelta

from sqlalchemy import or_, select

from app.destinations import DeliveryFailure, DestinationStore, classify_error, open_destination
from app.domain import export_delivery
from app.domain.errors import TransitionRefused
from app.domain.retry_policy import RetryPolicy
from app.extensions import db
from app.models.types import utcnow
from app.models.workspace_export import (
    DeliveryStatus,
    ExportDelivery,
    ExportDestination,
    ExportPackage,
    ExportVolume,
    FailureClass,
    NoticeKind,
    PackageStatus,
    VolumeStatus,
)
from app.services import export_notices, leases
from app.services.package_keys import checksums_key
from app.services.queue import ClaimedJob, WorkPriority, claim_and_enqueue
from app.services.work.core import LOST_AFTER, Candidate, Requeue, RequeueRefused, holder_is_alive, job_id
from app.storage import check_key_under, get_storage

log = logging.getLogger(__name__)

DELIVERY_JOB = "jobs.package_delivery.run"
DELIVERY_JOB_SLUG = "package-delivery"
# The wait after each transiently failed attempt; one attempt more than delays, then it stops.
# A transient failure (a worker that stopped included) is tried again after 1 min, 5 min, 30 min
# and 2 h; the fifth attempt is the last.
RETRIES = RetryPolicy(
    max_attempts=5, backoff=(timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=2))
)
RETRIES_EXHAUSTED = "retries_exhausted"
PACKAGE_WITHDRAWN = "package_withdrawn"
WORKER_STOPPED = "worker_stopped"
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
        delivery_id = export_delivery.create(
            workspace_id=package.workspace_id, package_id=package.id, destination_id=destination.id
        )
        if delivery_id is None:  # made earlier, by an earlier call or another process
            delivery_id = _live_delivery(package.id, destination.id)
        elif not destination.enabled:
            export_delivery.withhold(delivery_id)
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


def stored_checksums_key(package: ExportPackage) -> str | None:
    """The package's SHA256SUMS, or None for a package made before packages carried one."""
    key = checksums_key(package.prefix.rstrip("/") + "/")
    return key if get_storage().exists(key) else None


def package_keys(package: ExportPackage) -> list[str]:
    """Every complete volume of the package (under its prefix, so of the attempt that made it),
    then SHA256SUMS, then the manifest, which goes last: a manifest at the destination means the
    volumes and their checksums are there."""
    volumes = db.session.scalars(
        select(ExportVolume.key)
        .where(ExportVolume.execution_id == package.execution_id, ExportVolume.status == VolumeStatus.COMPLETE)
        .order_by(ExportVolume.dataset, ExportVolume.sequence, ExportVolume.id)
    ).all()
    prefix = package.prefix.rstrip("/") + "/"
    keys = [key for key in volumes if key.startswith(prefix)]
    checksums = stored_checksums_key(package)
    keys += [checksums] if checksums else []
    return [check_key_under(key, prefix) for key in keys] + [check_key_under(package.manifest_key, prefix)]


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
            export_delivery.withhold(delivery.id)
            db.session.commit()
        except TransitionRefused:
            return "not_due"
        return "withheld"
    started_at = now or utcnow()
    try:
        attempt = export_delivery.start(
            delivery_id, leases.holder_name(), leases.lease_expiry(started_at), now=started_at
        )
    except TransitionRefused:
        return "not_due"  # another worker has it, it settled, or its retry time has not come

    def renew(lease_expires_at: datetime) -> None:
        export_delivery.renew_lease(delivery_id, attempt, lease_expires_at)

    def still_current() -> None:
        renew(leases.lease_expiry(utcnow()))

    with leases.renewed_while_running(renew, f"package delivery {delivery_id}"):
        try:
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
            return _record_failure(delivery, attempt, failure)
    try:
        export_delivery.delivered(delivery_id, attempt, location)
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
            _remove_objects(store, [target for _, target in copies])
        raise
    top = copies[-1][1].rsplit("/", 1)[0]  # the manifest's folder
    return store.location(top) + "/"


def _still_ours(still_current: Callable[[], None]) -> bool:
    """Whether this attempt may still touch the destination: once a newer attempt took the
    delivery over, the same names are that attempt's objects."""
    try:
        still_current()
    except Exception:  # refused, or the database did not answer: leave the objects alone
        db.session.rollback()
        return False
    return True


def _remove_objects(store: DestinationStore, targets: list[str]) -> None:
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
    outcome = _record_failure(delivery, attempt, failure, notify=False)
    if outcome == "stale":
        return outcome
    return _expire_for_package(delivery)


def _record_failure(
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
        if RETRIES.exhausted(attempt):
            failure_class, code = FailureClass.PERMANENT, RETRIES_EXHAUSTED
            summary = f"Gave up after {attempt} attempts; the last one: {summary}"
        else:
            next_attempt_at = retry_at or now + RETRIES.delay_after(attempt)
    try:
        export_delivery.failed(
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
        export_delivery.expire(delivery.id)
        db.session.commit()
    except TransitionRefused:
        db.session.rollback()
        return "not_due"
    return "expired"


# Retries and the watchdog (periodic turns of the work engine)


def dispatch(delivery_id: int, seen_job_id: str | None) -> bool:
    """Claim the delivery's next attempt for a new job from the job id the caller saw, commit,
    then enqueue it: two schedulers never enqueue the same attempt twice."""
    job = ClaimedJob(
        DELIVERY_JOB,
        delivery_id,
        job_id(DELIVERY_JOB_SLUG, delivery_id),
        f"package delivery {delivery_id}",
        WorkPriority.BULK,
    )
    return claim_and_enqueue(lambda: export_delivery.claim_dispatch(delivery_id, seen_job_id, job.job_id), job)


def _deliverable(now: datetime):
    """Rows whose next attempt may start now, to an enabled destination, of an available package.
    A fresh pending row is left to `deliver_package`, which made it and runs it; one still pending
    after LOST_AFTER was left behind (its process died) and is dispatched."""
    return (
        select(ExportDelivery.id, ExportDelivery.job_id)
        .join(ExportDestination, ExportDestination.id == ExportDelivery.destination_id)
        .join(ExportPackage, ExportPackage.id == ExportDelivery.package_id)
        .where(
            export_delivery.startable(now),
            or_(ExportDelivery.status != DeliveryStatus.PENDING, ExportDelivery.created_at < now - LOST_AFTER),
            ExportDestination.enabled.is_(True),
            ExportDestination.removed_at.is_(None),
            ExportPackage.status == PackageStatus.AVAILABLE,
        )
    )


def dispatch_due(now: datetime | None = None, limit: int = 200) -> int:
    """Enqueue deliveries whose retry time has come (and pending ones left behind)."""
    now = now or utcnow()
    due = db.session.scalars(
        _deliverable(now).where(ExportDelivery.job_id.is_(None)).order_by(ExportDelivery.id).limit(limit)
    ).all()
    db.session.rollback()
    return sum(dispatch(delivery_id, None) for delivery_id in due)


def lost(now: datetime) -> list[Candidate]:
    """Deliveries waiting for an attempt dispatched longer than LOST_AFTER before `now`, for the
    engine's lost-job turn."""
    rows = db.session.execute(
        _deliverable(now)
        .where(ExportDelivery.job_id.is_not(None), ExportDelivery.dispatched_at < now - LOST_AFTER)
        .order_by(ExportDelivery.id)
        .limit(200)
    ).all()
    db.session.rollback()
    return [Candidate(row.id, row.job_id, functools.partial(dispatch, row.id, row.job_id)) for row in rows]


def lapsed(now: datetime) -> list[Candidate]:
    """Delivering attempts whose holder's lease lapsed by `now` (their worker died)."""
    rows = db.session.execute(
        select(ExportDelivery.id, ExportDelivery.job_id, ExportDelivery.attempt_count, ExportDelivery.lease_holder)
        .where(
            ExportDelivery.status == DeliveryStatus.DELIVERING,
            leases.lease_lapsed(ExportDelivery.lease_expires_at, now),
        )
        .order_by(ExportDelivery.id)
    ).all()
    db.session.rollback()
    return [
        Candidate(
            row.id,
            row.job_id,
            functools.partial(dispatch, row.id, row.job_id),
            attempt=row.attempt_count,
            attempts_used=row.attempt_count,
            holder=row.lease_holder,
        )
        for row in rows
    ]


def retry_lapsed_later(candidate: Candidate, now: datetime, retry_at: datetime) -> bool:
    """Fail the lapsed attempt as transient `worker_stopped`, its retry due at `retry_at`."""
    return _fail_lapsed(candidate, now, retry_at)


def give_up_lapsed(candidate: Candidate, now: datetime) -> bool:
    """Fail the lapsed attempt, the last the policy allows, for good (`retries_exhausted`), and
    tell the administrators."""
    return _fail_lapsed(candidate, now, None)


def _fail_lapsed(candidate: Candidate, now: datetime, retry_at: datetime | None) -> bool:
    delivery = db.session.get(ExportDelivery, candidate.record_id)
    if delivery is None:
        return False
    summary = f"The worker running this attempt ({candidate.holder or 'unknown'}) stopped before it finished."
    failure = DeliveryFailure(FailureClass.TRANSIENT, WORKER_STOPPED, summary)
    outcome = _record_failure(delivery, candidate.attempt, failure, now, lease_lapsed_before=now, retry_at=retry_at)
    if outcome == "stale":
        return False
    _remove_dead_attempts_copy(candidate.record_id, candidate.attempt)
    return True


def _remove_dead_attempts_copy(delivery_id: int, attempt: int) -> None:
    """A worker killed mid-copy leaves volumes without their manifest at the destination; they
    are removed as its attempt is failed, so the customer never finds part of a package while
    the retry waits (or after the last attempt). Nothing is removed once a newer attempt started:
    the same names are its objects then."""
    delivery = db.session.get_one(ExportDelivery, delivery_id, populate_existing=True)
    if delivery.attempt_count != attempt or delivery.status != DeliveryStatus.FAILED:
        db.session.rollback()
        return
    package = db.session.get_one(ExportPackage, delivery.package_id)
    destination = db.session.get_one(ExportDestination, delivery.destination_id)
    targets = [relative_key(package, key) for key in package_keys(package)]
    try:
        store = open_destination(destination)
    except Exception:  # an unusable destination holds nothing this attempt could have written
        log.warning("package delivery %s: its destination cannot be opened to remove a dead copy", delivery_id)
        db.session.rollback()
        return
    db.session.rollback()  # no transaction stays open while the destination answers
    _remove_objects(store, targets)


def requeue(delivery_id: int, now: datetime) -> Requeue:
    """A staff requeue of the delivery: refused once it settled, while an attempt's holder is
    alive, while it is withheld or failed for good (an administrator's Deliver, staff's
    supersede, are their paths); a transient failure waiting for its backoff is made due now."""
    delivery = db.session.get(ExportDelivery, delivery_id)
    if delivery is None:
        raise RequeueRefused(f"Package delivery {delivery_id} no longer exists.")
    label = f"Package delivery {delivery_id}"
    if delivery.status in (DeliveryStatus.DELIVERED, DeliveryStatus.SUPERSEDED, DeliveryStatus.EXPIRED):
        raise RequeueRefused(f"{label} is already {delivery.status}; a settled delivery never runs again.")
    if delivery.status == DeliveryStatus.WITHHELD:
        raise RequeueRefused(
            f"{label} is withheld because its destination is disabled; once the destination is enabled, "
            "an administrator of the workspace delivers it from its page."
        )
    if delivery.status == DeliveryStatus.DELIVERING:
        if holder_is_alive(delivery.lease_expires_at, now):
            raise RequeueRefused(
                f"{label} is copying now and its worker is alive (it renewed its lease a moment ago), so it "
                "was not dispatched again."
            )
        raise RequeueRefused(
            f"{label}'s worker stopped mid-copy; the watchdog records that attempt as failed within seconds "
            "and retries it. Requeue it again once it shows as failed if the retry should not wait."
        )
    if delivery.status == DeliveryStatus.FAILED and delivery.failure_class == FailureClass.PERMANENT:
        raise RequeueRefused(f"{label} failed for good; supersede it from its page to start a replacement delivery.")
    seen_job_id, seen_attempt = delivery.job_id, delivery.attempt_count
    waits_for_backoff = delivery.status == DeliveryStatus.FAILED and (
        delivery.next_attempt_at is not None and delivery.next_attempt_at > now
    )

    def dispatch_now() -> bool:
        if not waits_for_backoff:
            return dispatch(delivery_id, seen_job_id)
        try:
            export_delivery.retry_now(delivery_id, seen_attempt, now)
        except TransitionRefused:
            return False
        return dispatch(delivery_id, None)

    return Requeue(delivery.workspace_id, "export_delivery", label, dispatch_now)
