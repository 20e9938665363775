"""A staff requeue of any kind's record, from the kind's declaration (`WorkKind`): refused once the
record settled, or while its holder's lease is live (a second attempt beside a live one could
only wait, or do its work twice); the kind may refuse more (`WorkKind.before_requeue`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.extensions import db
from app.services.work import claims
from app.services.work.work_kind import Requeue, RequeueRefused, WorkKind, refuse_while_held


def requeue_of(kind: WorkKind, record_id: int, now: datetime) -> Requeue:
    """Read the record and say how to dispatch it again (nothing is dispatched here), or raise
    RequeueRefused with the sentence the staff member reads."""
    rows = kind.rows
    label = f"{kind.label} {record_id}"
    # Any kind's record: its columns are read by the names its declaration gives.
    record: Any = db.session.get(rows.model, record_id)
    if record is None:
        raise RequeueRefused(f"{label} no longer exists.")
    status = getattr(record, rows.status.key)
    if status not in rows.active:
        raise RequeueRefused.finished(label, status, kind.finished_afterwards)
    if status == rows.running:
        refuse_while_held(label, kind.held_doing, getattr(record, rows.lease_expires_at.key), now)
    first = kind.before_requeue(record, now) if kind.before_requeue is not None else None
    seen_job_id = db.session.scalar(select(rows.job_id).where(rows.record_key == record_id))

    def dispatch_now() -> bool:
        if first is None:
            return claims.dispatch(kind, record_id, seen_job_id)
        try:
            first()
        except TransitionRefused:
            return False
        return claims.dispatch(kind, record_id, None)

    return Requeue(record.workspace_id, kind.subject_type, label, dispatch_now)
