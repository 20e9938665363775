"""The recipient-delivery lifecycle (STATE-PFM-QRY-009): `pending → submitted | skipped | failed`.

A row is claimed BY A RUN ATTEMPT before its message is sent: the claim is a conditional UPDATE
recording the attempt (`claimed_attempt`), and it succeeds only while the row is pending, the
attempt asking still holds the run (running at that attempt, lease live: schedule_run.held_by),
and the row is unclaimed or claimed by an older attempt. An older attempt no longer holds the
run, and a newer attempt starts only once the older one's lease lapsed, so a claim is taken over
only from a claimant whose lease lapsed. The claim is committed before the message goes out,
`confirm_claim` checks it is still the attempt's own right before the message is handed to the
mailer, and only the claimant settles the row (`claimed_attempt = :attempt` in every settling
UPDATE): a frozen attempt that wakes after another took its rows can neither send nor settle.
The submission is committed right after the mail server accepted the message
(docs/architecture.md, "Schedule runs", for the one window that remains); every transition here
commits, each being a fact the next attempt relies on.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, select

from app.domain import transitions
from app.domain.errors import TransitionRefused
from app.domain.schedules import schedule_run
from app.extensions import db
from app.models.schedule import DeliveryStatus, RecipientDelivery
from app.models.types import database_time

ERROR_LIMIT = 500


_apply = transitions.of_rows(RecipientDelivery, "recipient delivery")


def _still_held(attempt: int, now: datetime | None) -> list:
    return [
        RecipientDelivery.status == DeliveryStatus.PENDING,
        schedule_run.held_by(RecipientDelivery.run_id, attempt, now),
    ]


def claim(delivery_id: int, attempt: int, now: datetime | None = None) -> None:
    """Take a pending row for sending, for run attempt `attempt`, which must still hold the run;
    refused while the row is claimed by this attempt or a newer one."""
    _apply(
        delivery_id,
        [
            *_still_held(attempt, now),
            or_(RecipientDelivery.claimed_attempt.is_(None), RecipientDelivery.claimed_attempt < attempt),
        ],
        {
            "claimed_at": database_time(now),
            "claimed_attempt": attempt,
            "send_attempts": RecipientDelivery.send_attempts + 1,
        },
        "be claimed",
    )
    db.session.commit()


def confirm_claim(delivery_id: int, attempt: int, now: datetime | None = None) -> None:
    """Right before the message is handed to the mailer: the row is still pending and claimed by
    `attempt`, which still holds the run. TransitionRefused otherwise (nothing may be sent)."""
    still_own = db.session.scalar(
        select(RecipientDelivery.id).where(
            RecipientDelivery.id == delivery_id,
            RecipientDelivery.claimed_attempt == attempt,
            *_still_held(attempt, now),
        )
    )
    db.session.rollback()
    if still_own is None:
        raise TransitionRefused(f"recipient delivery {delivery_id} is no longer claimed by attempt {attempt}")


def _claimed_by(attempt: int) -> list:
    return [RecipientDelivery.status == DeliveryStatus.PENDING, RecipientDelivery.claimed_attempt == attempt]


def submit(delivery_id: int, attempt: int, submission_id: str, now: datetime | None = None) -> None:
    _apply(
        delivery_id,
        _claimed_by(attempt),
        {
            "status": DeliveryStatus.SUBMITTED,
            "submission_id": submission_id[:200],
            "submitted_at": database_time(now),
            "next_attempt_at": None,
            "last_error": None,
        },
        "be submitted",
    )
    db.session.commit()


def release_for_retry(delivery_id: int, attempt: int, error: str, next_attempt_at: datetime) -> None:
    """The server could not take the message now: free the claim so a later attempt sends it."""
    _apply(
        delivery_id,
        _claimed_by(attempt),
        {
            "claimed_at": None,
            "claimed_attempt": None,
            "last_error": error[:ERROR_LIMIT],
            "next_attempt_at": next_attempt_at,
        },
        "wait for a retry",
    )
    db.session.commit()


def fail(delivery_id: int, attempt: int, error: str) -> None:
    """The claimant's message cannot be sent (refused for good, no address)."""
    _apply(
        delivery_id,
        _claimed_by(attempt),
        {"status": DeliveryStatus.FAILED, "last_error": error[:ERROR_LIMIT], "next_attempt_at": None},
        "fail",
    )
    db.session.commit()


def fail_unsent(delivery_id: int, attempt: int, error: str) -> None:
    """The run settled at attempt `attempt` without sending this row: unclaimed, or claimed by that
    attempt or an earlier one (a newer attempt's claim is left to it)."""
    _apply(
        delivery_id,
        [
            RecipientDelivery.status == DeliveryStatus.PENDING,
            or_(RecipientDelivery.claimed_attempt.is_(None), RecipientDelivery.claimed_attempt <= attempt),
        ],
        {"status": DeliveryStatus.FAILED, "last_error": error[:ERROR_LIMIT], "next_attempt_at": None},
        "fail",
    )
    db.session.commit()
