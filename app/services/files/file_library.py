"""A person's export files: listing them, loading one, and opening its download.

Files are read by their requester only (INV-04), so every read is scoped by workspace id AND
requester: another person's file, an administrator's included, does not exist for you. The one
widening is a file a schedule produced: people with schedule-management authority read it too,
since they answer for every schedule of the workspace. Expiry is computed on read
(STATE-PFM-QRY-006), never stored.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select

from app.domain.errors import Conflict
from app.domain.people.access import RequesterContext, has_schedule_authority
from app.extensions import db
from app.models import ExportFile
from app.models.export_file import FORMAT_LABELS, FailureCode, FileFormat, FileKind, FileStatus
from app.services.files.file_requests import HEADINGS
from app.services.pages.list_pages import (
    ListFilter,
    ListRequest,
    ListSpec,
    Page,
    a_to_z,
    newest_first,
    oldest_first,
    page_of,
    without_json,
)
from app.services.pages.stored_download import Download, stored_download

# The overview's "about to expire": files whose download ends within this time.
EXPIRING_WITHIN = timedelta(days=3)
ATTENTION_LIMIT = 5
EXPIRED = "expired"
FILE_LIST = ListSpec(
    name="files",
    sorts={
        "newest": newest_first(ExportFile.requested_at, ExportFile.id),
        "oldest": oldest_first(ExportFile.requested_at, ExportFile.id),
        "name": a_to_z(ExportFile.source_name, ExportFile.id, "Source name A–Z"),
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
        "format": ListFilter("Format", FORMAT_LABELS),
        "source": ListFilter(
            "Source", {FileKind.QUERY: "Queries", FileKind.REPORT: "Reports", FileKind.AUDIT: "Audit log"}
        ),
    },
    search_columns=(ExportFile.source_name, ExportFile.file_name),
)
# The Schedule filter's choices besides one schedule's id: files of any schedule, or of none.
ANY_SCHEDULE, NO_SCHEDULE = "any", "none"
# Werkzeug adds "; charset=utf-8" to the text types.
MIME_TYPES: dict[str, str] = {
    FileFormat.CSV: "text/csv",
    FileFormat.XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    FileFormat.PDF: "application/pdf",
}


class FileNotReady(Conflict):
    """The file has not (or not successfully) been produced, so there is nothing to download."""


class FileExpired(Conflict):
    """The file is past its expiry; a new one has to be requested."""

    def __init__(self, expired_at: datetime):
        super().__init__(f"This file expired on {expired_at:%Y-%m-%d}.")
        self.expired_at = expired_at


def _own_files(access: RequesterContext):
    return select(ExportFile).where(
        ExportFile.workspace_id == access.workspace_id, ExportFile.requester_id == access.person_id
    )


def file_list(visible_schedules: dict[int, str]) -> ListSpec:
    """The Files list as the person sees it: FILE_LIST with a Schedule filter offering the schedules
    of this workspace they may see, by id (`schedules.visible_names`; a schedule's file is its
    owner's when it ran)."""
    choices = {ANY_SCHEDULE: "From any schedule", NO_SCHEDULE: "Requested by hand"}
    choices.update({str(schedule_id): name for schedule_id, name in visible_schedules.items()})
    return replace(FILE_LIST, filters={**FILE_LIST.filters, "schedule": ListFilter("Schedule", choices)})


def page_files(access: RequesterContext, request: ListRequest, now: datetime) -> Page:
    """One page of the person's own files in the workspace (INV-04), searched, filtered and ordered as asked.

    Expiry is computed on read, so "ready to download" and "expired" split succeeded files at `now`.
    """
    statement = _own_files(access).options(*without_json(ExportFile))
    status = request.filters.get("status")
    if status == EXPIRED:
        statement = statement.where(ExportFile.status == FileStatus.SUCCEEDED, ExportFile.expires_at <= now)
    elif status == FileStatus.SUCCEEDED:
        statement = statement.where(ExportFile.status == FileStatus.SUCCEEDED, ExportFile.expires_at > now)
    elif status:
        statement = statement.where(ExportFile.status == status)
    if "format" in request.filters:
        statement = statement.where(ExportFile.format == request.filters["format"])
    if "source" in request.filters:
        statement = statement.where(ExportFile.kind == request.filters["source"])
    schedule = request.filters.get("schedule")
    if schedule == ANY_SCHEDULE:
        statement = statement.where(ExportFile.schedule_id.is_not(None))
    elif schedule == NO_SCHEDULE:
        statement = statement.where(ExportFile.schedule_id.is_(None))
    elif schedule:
        statement = statement.where(ExportFile.schedule_id == int(schedule))
    page = page_of(FILE_LIST, request, statement)
    return page.with_rows([export for (export,) in page.rows])


def choice_words(export: ExportFile) -> str:
    """What the file was made with, in a few words for the Files list (its page spells each out):
    a query file's heading, text and time stamps, a report file's kind."""
    if export.kind == FileKind.REPORT:
        return f"{export.report_kind} report" if export.report_kind else "Report"
    if export.kind != FileKind.QUERY:
        return ""
    words = [HEADINGS.get(export.heading, export.heading)]
    if export.format == FileFormat.CSV:
        words.append("exact values" if export.exact_values else "spreadsheet-safe text")
    if export.include_descriptions:
        words.append("descriptions row")
    if export.time_zone:
        words.append(f"times in {export.time_zone}")
    return " · ".join(words)


def recent_files(access: RequesterContext, limit: int = ATTENTION_LIMIT) -> list[ExportFile]:
    """The person's newest files in the workspace."""
    return list(
        db.session.scalars(
            _own_files(access).order_by(ExportFile.requested_at.desc(), ExportFile.id.desc()).limit(limit)
        )
    )


def failed_files(access: RequesterContext, limit: int = ATTENTION_LIMIT) -> list[ExportFile]:
    """The person's newest failed files (cancelled ones are a choice, not a problem, so they are left out)."""
    return list(
        db.session.scalars(
            _own_files(access)
            .where(ExportFile.status == FileStatus.FAILED, ExportFile.failure_code != FailureCode.CANCELLED)
            .order_by(ExportFile.requested_at.desc(), ExportFile.id.desc())
            .limit(limit)
        )
    )


def expiring_files(access: RequesterContext, now: datetime, limit: int = ATTENTION_LIMIT) -> list[ExportFile]:
    """The person's files still downloadable whose download ends within EXPIRING_WITHIN, soonest first."""
    return list(
        db.session.scalars(
            _own_files(access)
            .where(
                ExportFile.status == FileStatus.SUCCEEDED,
                ExportFile.expires_at > now,
                ExportFile.expires_at <= now + EXPIRING_WITHIN,
            )
            .order_by(ExportFile.expires_at, ExportFile.id)
            .limit(limit)
        )
    )


def get_file(access: RequesterContext, file_id: int) -> ExportFile | None:
    """The file if it is in this workspace and this person may read it; otherwise None.

    Its requester may (for a schedule's file, the schedule's owner when it ran); so may anyone
    with schedule-management authority when a schedule produced it.
    """
    readers = ExportFile.requester_id == access.person_id
    if has_schedule_authority(access):
        readers = or_(readers, ExportFile.schedule_id.is_not(None))
    return db.session.execute(
        select(ExportFile).where(
            and_(ExportFile.id == file_id, ExportFile.workspace_id == access.workspace_id, readers)
        )
    ).scalar_one_or_none()


def open_download(export: ExportFile, now: datetime) -> Download:
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
