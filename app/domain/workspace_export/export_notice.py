"""A workspace-export notice's sending: `pending → sent | failed`, one guarded UPDATE per move.

A notice row exists once per (subject, kind, person) (the unique index), so a step that runs
twice records it once. Sending claims the row first: the claim counts the attempt and pushes
`next_attempt_at` forward by a claim period, so a second sender (another worker, the periodic
retry) leaves it alone while the first one is at it, and takes it over only if the first one
died. Each transition commits.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_

from app.domain import transitions
from app.extensions import db
from app.models.export_notice import ExportNotice, NoticeStatus
from app.models.types import SUMMARY_LIMIT, database_time, moment_after

# How long a claimed notice belongs to its sender before another may take it over.
CLAIM_PERIOD = timedelta(minutes=5)


# The guarded UPDATE of one notice; returns its attempt number.
_apply = transitions.of_rows(ExportNotice, "notice", ExportNotice.attempt_count)


def claim(notice_id: int, now: datetime | None = None) -> int:
    """A pending notice that is due (never tried, its retry time come, or its sender's claim
    lapsed) is this sender's for CLAIM_PERIOD. Returns the attempt number."""
    at = database_time(now)
    attempt = _apply(
        notice_id,
        [
            ExportNotice.status == NoticeStatus.PENDING,
            or_(ExportNotice.next_attempt_at.is_(None), ExportNotice.next_attempt_at <= at),
        ],
        {"attempt_count": ExportNotice.attempt_count + 1, "next_attempt_at": moment_after(at, CLAIM_PERIOD)},
        "be claimed",
    )
    db.session.commit()
    return attempt


def _claimed(attempt: int) -> list:
    return [ExportNotice.status == NoticeStatus.PENDING, ExportNotice.attempt_count == attempt]


def mark_sent(notice_id: int, attempt: int, message_id: str, now: datetime | None = None) -> None:
    _apply(
        notice_id,
        _claimed(attempt),
        {
            "status": NoticeStatus.SENT,
            "sent_at": database_time(now),
            "message_id": message_id[:300],
            "next_attempt_at": None,
            "last_error": None,
        },
        "be marked sent",
    )
    db.session.commit()


def retry_later(notice_id: int, attempt: int, error: str, next_attempt_at: datetime) -> None:
    """The mail server could not take it now; the notice stays pending until `next_attempt_at`."""
    _apply(
        notice_id,
        _claimed(attempt),
        {"next_attempt_at": next_attempt_at, "last_error": error[:SUMMARY_LIMIT]},
        "wait for a retry",
    )
    db.session.commit()


def fail(notice_id: int, attempt: int, error: str) -> None:
    """Refused for good (or given up after many tries): never sent again."""
    _apply(
        notice_id,
        _claimed(attempt),
        {"status": NoticeStatus.FAILED, "next_attempt_at": None, "last_error": error[:SUMMARY_LIMIT]},
        "fail",
    )
    db.session.commit()
