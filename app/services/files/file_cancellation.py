"""Cancelling a file that is still queued or running.

Its requester may cancel it, and so may an administrator of the workspace who can see it (a
schedule's file, for instance). The file fails with code `cancelled` and remembers who
cancelled it; a worker producing it notices at its next fenced write and aborts its upload
(app/domain/files/export_file.py `cancel`). A file that settled first stays as it settled.
"""

from __future__ import annotations

from app.domain.errors import AccessDenied, TransitionRefused
from app.domain.files import export_file
from app.domain.people.access import RequesterContext
from app.extensions import db
from app.models import ExportFile, Person
from app.models.export_file import FailureCode, FileStatus
from app.services.accounts import audit


class CannotCancel(TransitionRefused):
    """The file settled before the cancel reached it; the message says how it settled."""


def may_cancel(access: RequesterContext, export: ExportFile) -> bool:
    """Whether this person may cancel the file (whatever its status): its requester or an administrator."""
    return export.workspace_id == access.workspace_id and (export.requester_id == access.person_id or access.is_admin)


def cancel_file(access: RequesterContext, export: ExportFile) -> None:
    """Fail the queued or running file with code `cancelled`, audited in the same transaction.

    AccessDenied when the person may not; CannotCancel when the file has already settled.
    """
    if not may_cancel(access, export):
        raise AccessDenied("Only the person who asked for this file, or an administrator, can cancel it.")
    export_id, status = export.id, export.status
    name = db.session.get_one(Person, access.person_id).name
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action="file.cancelled",
        subject_type="file",
        subject_id=export_id,
        details={"status_before": status},
    )
    try:
        export_file.cancel(export_id, access.person_id, f"Cancelled by {name}.")
    except TransitionRefused:
        settled = db.session.get(ExportFile, export_id, populate_existing=True)
        raise CannotCancel(
            f"This file has already {_settled_words(settled)}, so it can no longer be cancelled."
        ) from None
    db.session.refresh(export)


def _settled_words(export: ExportFile | None) -> str:
    if export is None:
        return "gone"
    if export.status == FileStatus.SUCCEEDED:
        return "been made"
    return "been cancelled" if export.failure_code == FailureCode.CANCELLED else "failed"
