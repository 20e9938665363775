"""Schedule runs' destination deliveries as a kind of the work engine: where their records and
claims are, when one waits for an attempt, how an attempt whose worker died is failed (retried
after the copy policy's delay, or for good), and what a staff requeue refuses or does first.
`app.services.work.kinds` registers it; what a delivery's job does is
app/services/schedules/destination_deliveries.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, and_

from app.destinations import DeliveryFailure
from app.domain.schedules import destination_delivery
from app.domain.timing.retry_policy import COPY_TO_A_DESTINATION
from app.models.package_delivery import FailureClass
from app.models.schedule_destination_delivery import DestinationDelivery, DestinationDeliveryStatus
from app.services.schedules import destination_deliveries
from app.services.work import claims
from app.services.work.queue import WorkPriority
from app.services.work.work_kind import Candidate, RequeueRefused, WorkKind
from app.services.work.work_rows import WorkRows


def _waiting(now: datetime) -> ColumnElement[bool]:
    """Its next attempt may start now, to a live destination (`start` refuses the others)."""
    return and_(destination_delivery.startable(now), destination_delivery.to_live_destination())


def _retry_later(candidate: Candidate, now: datetime, retry_at: datetime) -> bool:
    """Fail the lapsed attempt as transient `worker_stopped`, its retry due at `retry_at`."""
    return _fail_lapsed(candidate, now, retry_at)


def _give_up(candidate: Candidate, now: datetime) -> bool:
    """Fail the lapsed attempt, the last the policy allows, for good (`retries_exhausted`)."""
    return _fail_lapsed(candidate, now, None)


def _fail_lapsed(candidate: Candidate, now: datetime, retry_at: datetime | None) -> bool:
    """Nothing at the destination needs removing: a copy is whole or absent (an S3 upload never
    completed, an SFTP or directory file never renamed into place)."""
    summary = f"The worker running this attempt ({candidate.holder or 'unknown'}) stopped before it finished."
    failure = DeliveryFailure(FailureClass.TRANSIENT, destination_deliveries.WORKER_STOPPED, summary)
    outcome = destination_deliveries.record_failure(
        candidate.record_id, candidate.attempt, failure, now, lease_lapsed_before=now, retry_at=retry_at
    )
    return outcome != "stale"


def _before_requeue(delivery: DestinationDelivery, now: datetime) -> Callable[[], None] | None:
    """A staff requeue is refused while a dead attempt waits to be failed, and once it failed for
    good (an administrator's Retry is its path); a transient failure waiting for its retry is made
    due now first."""
    label = f"Schedule destination delivery {delivery.id}"
    if delivery.status == DestinationDeliveryStatus.DELIVERING:
        raise RequeueRefused(
            f"{label}'s worker stopped mid-copy; the watchdog records that attempt as failed within seconds "
            "and retries it."
        )
    if delivery.status == DestinationDeliveryStatus.FAILED and delivery.failure_class == FailureClass.PERMANENT:
        raise RequeueRefused(f"{label} failed for good; a workspace administrator retries it from the run history.")
    waiting_for_its_backoff = delivery.next_attempt_at is not None and delivery.next_attempt_at > now
    if not waiting_for_its_backoff:
        return None
    delivery_id, seen_attempt = delivery.id, delivery.attempt_count
    return lambda: destination_delivery.retry_now(delivery_id, seen_attempt, now)


DESTINATION_DELIVERIES = WorkKind(
    name="schedule_destination_delivery",
    slug="schedule-destination",
    priority=WorkPriority.SCHEDULED,
    job_function="jobs.schedule_destination.run",
    # A copy whose worker died is a transient failure like any other: retried after the backoff.
    retries=COPY_TO_A_DESTINATION,
    retry_later=_retry_later,
    rows=WorkRows.leased(
        DestinationDelivery,
        active=(
            DestinationDeliveryStatus.PENDING,
            DestinationDeliveryStatus.FAILED,
            DestinationDeliveryStatus.DELIVERING,
        ),
        running=DestinationDeliveryStatus.DELIVERING,
        waiting=_waiting,
        # Only an attempt that may start is claimed: pending, or failed with its retry time come.
        claimable=destination_delivery.startable,
    ),
    label="Schedule destination delivery",
    subject_type="schedule_destination_delivery",
    held_doing="copying",
    give_up=_give_up,
    before_requeue=_before_requeue,
)


def dispatch(delivery_ids: Sequence[int]) -> int:
    """Put the run's new deliveries on the queue at once (claimed first, so the periodic dispatch
    that would find them too enqueues none twice). Returns how many are on the queue."""
    return claims.dispatch_many(DESTINATION_DELIVERIES, delivery_ids)
