"""What every delivery to a customer's destination shares, a package's or a schedule run's file:
what a failure after the last try of the copy policy (`COPY_TO_A_DESTINATION`, app/domain/timing/retry_policy.py)
becomes, and the values its lifecycle's guarded UPDATE writes when an attempt starts and when one fails.

Each lifecycle keeps its own transitions (app/domain/workspace_export/package_delivery_lifecycle.py,
app/domain/schedules/destination_delivery.py); these are the facts they have in common.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.domain.timing.retry_policy import COPY_TO_A_DESTINATION
from app.models.package_delivery import FAILURE_CODE_LIMIT, FailureClass
from app.models.types import SUMMARY_LIMIT, Moment

RETRIES_EXHAUSTED = "retries_exhausted"


def after_failure(
    failure_class: FailureClass | str, code: str, summary: str, attempt: int, now: datetime, retry_at: datetime | None
) -> tuple[FailureClass, str, str, datetime | None]:
    """The failure as recorded, with when it is tried again: a transient failure waits for its
    retry (at `retry_at` when the work engine chose it, else after the policy's delay) or, after
    the last attempt, becomes the permanent `retries_exhausted`; a permanent one is not retried."""
    failure_class = FailureClass(failure_class)
    if failure_class == FailureClass.PERMANENT:
        return failure_class, code, summary, None
    if COPY_TO_A_DESTINATION.exhausted(attempt):
        return (
            FailureClass.PERMANENT,
            RETRIES_EXHAUSTED,
            f"Gave up after {attempt} attempts; the last one: {summary}",
            None,
        )
    return failure_class, code, summary, retry_at or now + COPY_TO_A_DESTINATION.delay_after(attempt)


def attempt_started(
    status: str, attempt_count: Any, holder: str, lease_expires_at: Moment, at: Moment
) -> dict[str, Any]:
    """The values of a delivery whose next attempt starts: `status`, one more attempt (the column
    `attempt_count`, incremented under the row's lock), no retry time, and the holder's lease."""
    return {
        "status": status,
        "attempt_count": attempt_count + 1,
        "next_attempt_at": None,
        "lease_holder": holder,
        "lease_expires_at": lease_expires_at,
        "updated_at": at,
    }


def attempt_failed(
    status: str, failure_class: FailureClass, code: str, summary: str, retry_at: datetime | None, at: Moment
) -> dict[str, Any]:
    """The values of a delivery whose attempt failed: the class, code and bounded summary, the
    lease ended, and a transient failure's retry time, its dispatch cleared so the retry is
    dispatched afresh once due. A transient failure needs a retry time, and only a transient one."""
    if (failure_class == FailureClass.TRANSIENT) != (retry_at is not None):
        raise ValueError("a transient failure needs a retry time, and only a transient one")
    values: dict[str, Any] = {
        "status": status,
        "failure_class": failure_class,
        "failure_code": code[:FAILURE_CODE_LIMIT],
        "failure_summary": summary[:SUMMARY_LIMIT],
        "next_attempt_at": retry_at,
        "lease_expires_at": None,
        "updated_at": at,
    }
    if retry_at is not None:
        values.update(job_id=None, dispatched_at=None)
    return values
