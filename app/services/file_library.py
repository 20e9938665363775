"""A person's export files: listing them, loading one, and opening its download.

Files are read by their requester only (INV-04), so every read is scoped by workspace id AND
requester: another person's file, an administrator's included, does not exist for you. The one
widening is a file a schedule produced: people with schedule-management authority read it too,
since they answer for every schedule of the workspace. Expiry is computed on read
(STATE-PFM-QRY-006), never stored.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, func, or_, select

from app.domain.access import RequesterContext, has_schedule_authority
from app.domain.errors import DomainError
from app.extensions import db
from app.models import QueryExport
from app.models.export_file import FailureCode, FileStatus
from app.models.schedule import Schedule
from app.services.list_pages import (
    MOMENT,
    NUMBER,
    TEXT,
    ListFilter,
    ListRequest,
    ListSpec,
    Page,
    SortOrder,
    newest_first,
    page_of,
    without_json,
)
from app.services.stored_download import Download, stored_download

# The overview's "about to expire": files whose download ends within this time.
EXPIRING_WITHIN = timedelta(days=3)
ATTENTION_LIMIT = 5
EXPIRED = "expired"
FILE_LIST = ListSpec(
    name="files",
    sorts={
        "newest": newest_first(QueryExport.requested_at, QueryExport.id),
        "oldest": SortOrder("Oldest first", (QueryExport.requested_at, QueryExport.id), (MOMENT, NUMBER)),
        "name": SortOrder("Source name A–Z", (func.lower(QueryExport.source_name), QueryExport.id), (TEXT, NUMBER)),
    },
    filters={
        "status": ListFilter(
            "Status",
            {
                FileStatus.QUEUED: "Queued",
                FileStatus.RUNNING: "Running",
                FileStatus.SUCCEEDED: "Ready to download",
                EXPIRED: "Expired",
                FileStatus.FAILED: "Failed or cancelled",
            },
        ),
        "format": ListFilter("Format", {"csv": "CSV", "xlsx": "Excel (XLSX)", "pdf": "PDF"}),
        "source": ListFilter("Source", {"query": "Queries", "report": "Reports", "audit": "Audit log"}),
    },
    search_columns=(QueryExport.source_name, QueryExport.file_name),
)
# Werkzeug adds "; charset=utf-8" to the text types.
MIME_TYPES = {
    "csv": "text/csv",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pdf": "application/pdf",
}


class FileNotReady(DomainError):
    """The file has not (or not successfully) been produced, so there is nothing to download."""


class FileExpired(DomainError):
    """The file is past its expiry; a new one has to be requested."""

    def __init__(self, expired_at: datetime):
        super().__init__(f"This file expired on {expired_at:%Y-%m-%d}.")
        self.expired_at = expired_at


def _own_files(access: RequesterContext):
    return select(QueryExport).where(
        QueryExport.workspace_id == access.workspace_id, QueryExport.requester_id == access.person_id
    )


def page_files(access: RequesterContext, request: ListRequest, now: datetime) -> Page:
    """One page of the person's own files in the workspace (INV-04), searched, filtered and ordered as asked.

    Expiry is computed on read, so "ready to download" and "expired" split succeeded files at `now`.
    """
    statement = _own_files(access).options(*without_json(QueryExport))
    status = request.filters.get("status")
    if status == EXPIRED:
        statement = statement.where(QueryExport.status == FileStatus.SUCCEEDED, QueryExport.expires_at <= now)
    elif status == FileStatus.SUCCEEDED:
        statement = statement.where(QueryExport.status == FileStatus.SUCCEEDED, QueryExport.expires_at > now)
    elif status:
        statement = statement.where(QueryExport.status == status)
    if "format" in request.filters:
        statement = statement.where(QueryExport.format == request.filters["format"])
    if "source" in request.filters:
        statement = statement.where(QueryExport.kind == request.filters["source"])
    page = page_of(FILE_LIST, request, statement)
    return page.with_rows([export for (export,) in page.rows])


def recent_files(access: RequesterContext, limit: int = ATTENTION_LIMIT) -> list[QueryExport]:
    """The person's newest files in the workspace."""
    return list(
        db.session.scalars(
            _own_files(access).order_by(QueryExport.requested_at.desc(), QueryExport.id.desc()).limit(limit)
        )
    )


def failed_files(access: RequesterContext, limit: int = ATTENTION_LIMIT) -> list[QueryExport]:
    """The person's newest failed files (cancelled ones are a choice, not a problem, so they are left out)."""
    return list(
        db.session.scalars(
            _own_files(access)
            .where(QueryExport.status == FileStatus.FAILED, QueryExport.failure_code != FailureCode.CANCELLED)
            .order_by(QueryExport.requested_at.desc(), QueryExport.id.desc())
            .limit(limit)
        )
    )


def expiring_files(access: RequesterContext, now: datetime, limit: int = ATTENTION_LIMIT) -> list[QueryExport]:
    """The person's files still downloadable whose download ends within EXPIRING_WITHIN, soonest first."""
    return list(
        db.session.scalars(
            _own_files(access)
            .where(
                QueryExport.status == FileStatus.SUCCEEDED,
                QueryExport.expires_at > now,
                QueryExport.expires_at <= now + EXPIRING_WITHIN,
            )
            .order_by(QueryExport.expires_at, QueryExport.id)
            .limit(limit)
        )
    )


def get_file(access: RequesterContext, file_id: int) -> QueryExport | None:
    """The file if it is in this workspace and this person may read it; otherwise None.

    Its requester may (for a schedule's file, the schedule's owner when it ran); so may anyone
    with schedule-management authority when a schedule produced it.
    """
    readers = QueryExport.requester_id == access.person_id
    if has_schedule_authority(access):
        readers = or_(readers, QueryExport.schedule_id.is_not(None))
    return db.session.execute(
        select(QueryExport).where(
            and_(QueryExport.id == file_id, QueryExport.workspace_id == access.workspace_id, readers)
        )
    ).scalar_one_or_none()


def producing_schedule(export: QueryExport) -> Schedule | None:
    """The schedule that produced the file, if one did and it still exists in the file's workspace."""
    if export.schedule_id is None:
        return None
    return db.session.execute(
        select(Schedule).where(Schedule.id == export.schedule_id, Schedule.workspace_id == export.workspace_id)
    ).scalar_one_or_none()


def open_download(export: QueryExport, now: datetime) -> Download:
    """Where to fetch a succeeded, unexpired file from; FileExpired or FileNotReady otherwise.

    Storage errors (the object gone, the store down) are raised as the storage raises them.
    """
    if export.status != FileStatus.SUCCEEDED:
        raise FileNotReady("This file is not ready to download.")
    if export.expires_at is None:
        # The table's check constraint gives every succeeded file its expiry.
        raise ValueError(f"succeeded file {export.id} has no expiry")
    if export.is_expired(now):
        raise FileExpired(export.expires_at)
    return stored_download(export.storage_key, export.file_name, MIME_TYPES[export.format])
