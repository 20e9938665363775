"""Export notices as a kind of the work engine: where their records and claims are, and what the
engine cannot know of them: when a notice waits for an attempt, how an attempt whose worker died
is put back to wait for its retry (or given up after the last), and what a staff requeue refuses.
`app.services.work.kinds` registers it; what a notice's job does is `send` in
app/services/workspace_export/export_notices.py.

A notice is sent by the process that recorded it (`notify`), at once; the engine dispatches what
that process could not finish: a retry whose time came, a notice left unsent because its process
died, a notice whose sender's lease lapsed. Its tries, whatever ended them (the mail server, a
dead worker), count against the one policy of mail to a person (MAIL_TO_A_PERSON).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_

from app.domain.errors import TransitionRefused
from app.domain.timing.retry_policy import MAIL_TO_A_PERSON
from app.domain.workspace_export import export_notice
from app.models.export_notice import ExportNotice, NoticeStatus
from app.services.work.queue import WorkPriority
from app.services.work.work_kind import LOST_AFTER, Candidate, RequeueRefused, WorkKind
from app.services.work.work_rows import WorkRows


def _waiting(now: datetime) -> ColumnElement[bool]:
    """Its next try may start now. A notice never tried is left to `notify`, which recorded it and
    sends it; one still untried after LOST_AFTER was left behind (its process died) and is
    dispatched."""
    return and_(
        export_notice.startable(now),
        or_(ExportNotice.attempt_count > 0, ExportNotice.created_at < now - LOST_AFTER),
    )


def _stopped(candidate: Candidate) -> str:
    return f"The worker sending it ({candidate.holder or 'unknown'}) stopped before the mail server answered."


def _retry_later(candidate: Candidate, now: datetime, retry_at: datetime) -> bool:
    """Put the notice back to wait for its retry at `retry_at`, fenced on the stopped attempt."""
    try:
        export_notice.retry_later(
            candidate.record_id, candidate.attempt, _stopped(candidate), retry_at, lease_lapsed_before=now
        )
    except TransitionRefused:
        return False
    return True


def _give_up(candidate: Candidate, now: datetime) -> bool:
    """Fail the notice, its last try's worker stopped, fenced on that attempt."""
    try:
        export_notice.fail(
            candidate.record_id,
            candidate.attempt,
            f"Given up after {candidate.attempt} tries; the last: {_stopped(candidate)}",
            lease_lapsed_before=now,
        )
    except TransitionRefused:
        return False
    return True


def _before_requeue(notice: ExportNotice, now: datetime) -> Callable[[], None] | None:
    """A staff requeue is refused while a dead attempt waits to be put back, and while its retry
    time has not come (the engine dispatches it then)."""
    label = f"Export notice {notice.id}"
    if notice.status == NoticeStatus.SENDING:
        raise RequeueRefused(
            f"{label}'s worker stopped while sending it; the watchdog puts it back to wait for its retry within "
            "seconds, and the retry is dispatched when due."
        )
    if notice.next_attempt_at is not None and notice.next_attempt_at > now:
        raise RequeueRefused(
            f"{label} waits for the mail server: its next try is due at "
            f"{notice.next_attempt_at:%Y-%m-%d %H:%M:%S} UTC, and the watchdog dispatches it then."
        )
    return None


NOTICES = WorkKind(
    name="notice",
    slug="export-notice",
    priority=WorkPriority.BULK,
    job_function="jobs.export_notice.run",
    retries=MAIL_TO_A_PERSON,
    retry_later=_retry_later,
    rows=WorkRows.leased(
        ExportNotice,
        active=(NoticeStatus.PENDING, NoticeStatus.SENDING),
        running=NoticeStatus.SENDING,
        waiting=_waiting,
        # Only a try that may start is claimed: pending, never tried or its retry time come.
        claimable=export_notice.startable,
    ),
    label="Export notice",
    subject_type="export_notice",
    # A second attempt beside a live one could mail the person twice.
    held_doing="sending",
    give_up=_give_up,
    before_requeue=_before_requeue,
)
