"""A workspace-export notice's sending, one guarded UPDATE per move:

    pending → sending (an attempt starts: its number counted, its lease taken)
    sending → sent | failed | pending (the mail server could not take it: its retry time set)

A notice row exists once per (subject, kind, person) (the unique index), so a step that runs
twice records it once. Only a pending notice whose retry time has come (`startable`) starts, so
two senders (the process that recorded it, a job the work engine dispatched) never both send it:
the second start is refused. Every later move names the attempt it is for and requires the
notice to be sending at that attempt, so a stale attempt (its lease lapsed and the engine moved
the notice on) changes nothing. `lease_lapsed_before` adds the guard the engine needs when it
settles an attempt whose holder stopped: the holder's lease lapsed by then, so a live attempt is
never settled on its behalf. Each transition commits. The claim of a dispatch is the work
engine's (app/services/work/claims.py), guarded by `startable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, or_

from app.domain import transitions
from app.extensions import db
from app.models.export_notice import ExportNotice, NoticeStatus
from app.models.types import SUMMARY_LIMIT, Moment, database_now, database_time, lease_lapsed

# The guarded UPDATE of one notice; returns its attempt number.
_apply = transitions.of_rows(ExportNotice, "notice", ExportNotice.attempt_count)


def startable(moment: Moment) -> ColumnElement[bool]:
    """Pending, never tried or its retry time come by `moment`."""
    return and_(
        ExportNotice.status == NoticeStatus.PENDING,
        or_(ExportNotice.next_attempt_at.is_(None), ExportNotice.next_attempt_at <= moment),
    )


def start(notice_id: int, holder: str, lease_expires_at: Moment) -> int:
    """pending (and due) → sending: count the attempt and take the lease. Returns the attempt
    number every later move of this attempt names. Committed."""
    attempt = _apply(
        notice_id,
        [startable(database_now())],
        {
            "status": NoticeStatus.SENDING,
            "attempt_count": ExportNotice.attempt_count + 1,
            "next_attempt_at": None,
            "lease_holder": holder,
            "lease_expires_at": lease_expires_at,
        },
        "start",
    )
    db.session.commit()
    return attempt


def renew_lease(notice_id: int, attempt: int, lease_expires_at: Moment) -> None:
    _settle(notice_id, attempt, {"lease_expires_at": lease_expires_at}, "renew its lease")


def mark_sent(notice_id: int, attempt: int, message_id: str, now: datetime | None = None) -> None:
    _settle(
        notice_id,
        attempt,
        {
            "status": NoticeStatus.SENT,
            "sent_at": database_time(now),
            "message_id": message_id[:300],
            "last_error": None,
            "lease_expires_at": None,
        },
        "be marked sent",
    )


def retry_later(
    notice_id: int, attempt: int, error: str, next_attempt_at: datetime, lease_lapsed_before: datetime | None = None
) -> None:
    """sending → pending until `next_attempt_at`: the mail server could not take it now, or the
    attempt's worker stopped. Its retry is dispatched afresh once due."""
    _settle(
        notice_id,
        attempt,
        {
            "status": NoticeStatus.PENDING,
            "next_attempt_at": next_attempt_at,
            "last_error": error[:SUMMARY_LIMIT],
            "lease_expires_at": None,
            "job_id": None,
            "dispatched_at": None,
        },
        "wait for a retry",
        lease_lapsed_before,
    )


def fail(notice_id: int, attempt: int, error: str, lease_lapsed_before: datetime | None = None) -> None:
    """Refused for good (or given up after the last try): never sent again."""
    _settle(
        notice_id,
        attempt,
        {"status": NoticeStatus.FAILED, "last_error": error[:SUMMARY_LIMIT], "lease_expires_at": None},
        "fail",
        lease_lapsed_before,
    )


def _settle(
    notice_id: int, attempt: int, values: Mapping[str, Any], action: str, lease_lapsed_before: datetime | None = None
) -> None:
    """Move the notice as the attempt `attempt`, which must still hold it. Committed."""
    guard = [ExportNotice.status == NoticeStatus.SENDING, ExportNotice.attempt_count == attempt]
    if lease_lapsed_before is not None:
        guard.append(lease_lapsed(ExportNotice.lease_expires_at, lease_lapsed_before))
    _apply(notice_id, guard, values, action)
    db.session.commit()
