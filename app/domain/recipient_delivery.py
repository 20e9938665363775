"""The recipient-delivery lifecycle (STATE-PFM-QRY-009): `pending → submitted | skipped | failed`.

A row is claimed before its message is sent: the claim is a conditional UPDATE that succeeds
only while the row is pending and unclaimed, or claimed before the attempt now asking started
(an earlier attempt of the run claimed it and died, or was fenced out when its lease lapsed),
and it is committed before the message goes out. Two processes working on one run
therefore never both send one row's message. The submission is committed right after the
mail server accepted the message (docs/architecture.md, "Schedule runs", for the one window
that remains).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, update

from app.domain.errors import TransitionRefused
from app.extensions import db, execute_dml
from app.models.schedule import DeliveryStatus, RecipientDelivery
from app.models.types import utcnow

ERROR_LIMIT = 500


def _apply(delivery_id: int, guard: list, values: dict, action: str) -> None:
    result = execute_dml(
        update(RecipientDelivery)
        .where(RecipientDelivery.id == delivery_id, *guard)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:
        db.session.rollback()
        raise TransitionRefused(f"recipient delivery {delivery_id} cannot {action} now")
    db.session.commit()


def claim(delivery_id: int, stale_before: datetime, now: datetime | None = None) -> None:
    """Take a pending row for sending; refused while it is claimed since `stale_before` (the start
    of the attempt asking), i.e. by this attempt or a newer one."""
    _apply(
        delivery_id,
        [
            RecipientDelivery.status == DeliveryStatus.PENDING,
            or_(RecipientDelivery.claimed_at.is_(None), RecipientDelivery.claimed_at < stale_before),
        ],
        {"claimed_at": now or utcnow(), "send_attempts": RecipientDelivery.send_attempts + 1},
        "be claimed",
    )


def _claimed() -> list:
    return [RecipientDelivery.status == DeliveryStatus.PENDING, RecipientDelivery.claimed_at.is_not(None)]


def submit(delivery_id: int, submission_id: str, now: datetime | None = None) -> None:
    _apply(
        delivery_id,
        _claimed(),
        {
            "status": DeliveryStatus.SUBMITTED,
            "submission_id": submission_id[:200],
            "submitted_at": now or utcnow(),
            "next_attempt_at": None,
            "last_error": None,
        },
        "be submitted",
    )


def release_for_retry(delivery_id: int, error: str, next_attempt_at: datetime) -> None:
    """The server could not take the message now: free the claim so a later attempt sends it."""
    _apply(
        delivery_id,
        _claimed(),
        {"claimed_at": None, "last_error": error[:ERROR_LIMIT], "next_attempt_at": next_attempt_at},
        "wait for a retry",
    )


def fail(delivery_id: int, error: str) -> None:
    _apply(
        delivery_id,
        [RecipientDelivery.status == DeliveryStatus.PENDING],
        {"status": DeliveryStatus.FAILED, "last_error": error[:ERROR_LIMIT], "next_attempt_at": None},
        "fail",
    )
