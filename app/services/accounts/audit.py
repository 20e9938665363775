"""Recording audit events in the transaction of the change they describe (never committed here)."""

from __future__ import annotations

from typing import Any

from app.extensions import db
from app.models import AuditEvent


def record(
    *,
    workspace_id: int | None,
    actor_id: int | None,
    action: str,
    subject_type: str,
    subject_id: int,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """Add the event to the session; the caller's commit writes it with the change, or neither."""
    event = AuditEvent(
        workspace_id=workspace_id,
        actor_id=actor_id,
        action=action,
        subject_type=subject_type,
        subject_id=subject_id,
        reason=reason,
        details=details or {},
    )
    db.session.add(event)
    return event
