"""Admission of export files (INV-01): the file row and its outbox request commit together.

The storage key is fixed here and never changes; the substituted request is stored on the
file so the worker runs exactly what was asked for, with the requester's access as it is then.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from flask import current_app
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.access import RequesterContext
from app.domain.sources.query_spec import substitute, validate_definition
from app.domain.sources.stored_request import FileRequest
from app.domain.values.text_rules import ascii_slug
from app.extensions import db
from app.models import ExportFile, ExportFileRequest, SavedQuery, Workspace
from app.models.export_file import QUERY_FORMATS, FileFormat, FileKind, FileStatus
from app.models.types import utcnow
from app.rendering.dates import WorkspaceDates
from app.services.files.file_work import FILES
from app.services.work import claims
from app.vocabulary import Heading

HEADINGS: dict[str, str] = {
    Heading.NAMES: "Column names",
    Heading.LABELS: "Column labels",
    Heading.NONE: "No heading row",
}
# Whose clock an Excel file's time stamps show; CSV writes ISO 8601 times in UTC ("…Z") always.
TIME_STAMPS = {"workspace": "The workspace's time zone", "utc": "UTC"}
# What a person sees who sent a request form again with the same choices (a double click, a
# repeated POST, the form the browser restored on Back); the file page offers "Request another file".
ALREADY_REQUESTED = (
    "This form was already sent with these choices, so no second file was made: this is the file it asked for. "
    "To make another, choose “Request another file”."
)


@dataclass(frozen=True)
class QueryFileOptions:
    format: str
    heading: str = Heading.NAMES
    include_descriptions: bool = False
    # CSV "for data tools": text exactly as stored, without the `'` that keeps spreadsheets safe.
    exact_values: bool = False
    time_stamps: str = "workspace"

    def choices(self) -> dict[str, object]:
        """What the person chose on the request form, for the request's key (text_rules.request_key)."""
        return dataclasses.asdict(self)

    def validate(self) -> None:
        if self.format not in QUERY_FORMATS:
            raise ValidationError("Choose CSV or Excel (XLSX).", "format")
        if self.heading not in HEADINGS:
            raise ValidationError("Choose how the heading row is written.", "heading")
        if self.time_stamps not in TIME_STAMPS:
            raise ValidationError("Choose UTC or the workspace's time zone for time stamps.", "time_stamps")
        if self.exact_values and self.format != FileFormat.CSV:
            raise ValidationError(
                "Exact values is a CSV choice: an Excel file always keeps text exactly as stored.", "exact_values"
            )
        if self.include_descriptions and self.format != FileFormat.XLSX:
            raise ValidationError(
                "A descriptions row can only be added to an Excel (XLSX) file.", "include_descriptions"
            )
        if self.include_descriptions and self.heading == Heading.NONE:
            raise ValidationError(
                "A descriptions row goes under the heading row: choose a heading.", "include_descriptions"
            )


def safe_file_name(source_name: str, extension: str, on: date) -> str:
    """A download name built from the source name: ASCII letters, digits, dashes; never empty."""
    return f"{ascii_slug(source_name)}-{on.isoformat()}.{extension}"


def storage_key_for(workspace_id: int, extension: str) -> str:
    return f"files/w{workspace_id}/{uuid.uuid4().hex}.{extension}"


class FileSource(Protocol):
    """What a file records of the saved query it reads: its id (None once it is deleted) and dataset."""

    @property
    def id(self) -> int | None: ...

    @property
    def dataset(self) -> str: ...


def new_file(
    access: RequesterContext, *, source_name: str, file_format: str, requested_at: datetime, **source_fields
) -> ExportFile:
    """A queued file for the requester under a fresh storage key, named after its source.

    `source_fields` are what the file is of: its kind, its source's version and reference, and
    what its rows are (`request`).
    """
    return ExportFile(
        workspace_id=access.workspace_id,
        requester_id=access.person_id,
        source_name=source_name,
        format=file_format,
        status=FileStatus.QUEUED,
        storage_key=storage_key_for(access.workspace_id, file_format),
        file_name=safe_file_name(source_name, file_format, requested_at.date()),
        requested_at=requested_at,
        **source_fields,
    )


def queued_export(
    access: RequesterContext,
    query: FileSource,
    *,
    source_name: str,
    source_version: int,
    request: FileRequest,
    file_format: str,
    requested_at: datetime,
    **kind_fields,
) -> ExportFile:
    """A queued file of the query's rows for the requester (new_file), its request stored as JSON
    (FileRequest.from_json reads it back).

    `kind_fields` are what tells a query file from a report file: its kind, heading and report reference.
    """
    return new_file(
        access,
        source_name=source_name,
        file_format=file_format,
        requested_at=requested_at,
        source_query_id=query.id,
        source_version=source_version,
        dataset=query.dataset,
        request=request.to_json(),
        **kind_fields,
    )


def admit(export: ExportFile, dispatch_now: bool = True) -> ExportFile:
    """Commit the file and its outbox request in one transaction, then dispatch the request at once;
    or answer the file its request key (text_rules.request_key) already made.

    Two sends of one form that race past the lookup both insert: the unique index on
    (requester, request_token), which holds the key, lets one commit, and the other answers with that one's file.
    `dispatch_now=False` stops after the commit, as a web process that died right then would: the
    periodic dispatcher takes the row on its next turn.
    """
    if export.request_token is not None:
        made = _file_of_token(export.requester_id, export.request_token)
        if made is not None:
            return made
    export.outbox = ExportFileRequest()
    db.session.add(export)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        made = _file_of_token(export.requester_id, export.request_token) if export.request_token else None
        if made is None:
            raise
        return made
    if dispatch_now:
        # At once, so a small file need not wait for the engine's next turn; the claim keeps the
        # outbox row single (if the turn got there first nothing is enqueued), and a failed enqueue
        # leaves the claim for the lost-job turn.
        claims.dispatch(FILES, export.id, None)
    return export


def file_of_request_form(access: RequesterContext, key: str | None) -> ExportFile | None:
    """The file a request form already made for the person with this key (its token and choices), if any."""
    if key is None:
        return None
    return _file_of_token(access.person_id, key)


def _file_of_token(requester_id: int, token: str) -> ExportFile | None:
    return db.session.execute(
        select(ExportFile).where(ExportFile.requester_id == requester_id, ExportFile.request_token == token)
    ).scalar_one_or_none()


def workspace_dates(workspace_id: int) -> WorkspaceDates:
    """How the workspace shows dates and times on screen and in PDFs: its date format and zone."""
    row = db.session.execute(
        select(Workspace.date_format, Workspace.time_zone).where(Workspace.id == workspace_id)
    ).one()
    return WorkspaceDates(date_format=row.date_format, time_zone=row.time_zone)


def workspace_time_zone(workspace_id: int) -> str:
    """The workspace's IANA time zone name."""
    workspace = db.session.get(Workspace, workspace_id)
    return workspace.time_zone if workspace is not None else "UTC"


def file_time_zone(access: RequesterContext, options: QueryFileOptions) -> str:
    """The IANA zone the file's time stamps are shown in: UTC for CSV and when asked, else the workspace's."""
    if options.format != FileFormat.XLSX or options.time_stamps == "utc":
        return "UTC"
    return workspace_time_zone(access.workspace_id)


def queued_query_file(
    access: RequesterContext,
    query: FileSource,
    definition: dict,
    options: QueryFileOptions,
    *,
    source_name: str,
    source_version: int,
    requested_at: datetime,
    request_token: str | None = None,
) -> ExportFile:
    """A queued file of a query's rows for the requester, in the shape `options` asks for, not yet
    admitted: `definition` (validated) with its dates substituted for `requested_at`'s day. A
    person's request (request_query_file) and a schedule's run (from the query it keeps) both
    build their file here."""
    return queued_export(
        access,
        query,
        source_name=source_name,
        source_version=source_version,
        request=substitute(definition, requested_at.date()),
        file_format=options.format,
        requested_at=requested_at,
        kind=FileKind.QUERY,
        heading=options.heading,
        include_descriptions=options.include_descriptions,
        exact_values=options.exact_values,
        time_zone=file_time_zone(access, options),
        request_token=request_token,
    )


def request_query_file(
    access: RequesterContext,
    query: SavedQuery,
    options: QueryFileOptions,
    request_key: str | None = None,
    dispatch_now: bool = True,
) -> ExportFile:
    """Admit a file of the query; `request_key` is the request form's key (text_rules.request_key, see admit)."""
    if query.workspace_id != access.workspace_id:
        raise AccessDenied("That query is not in this workspace.")
    if not access.can_read_dataset(query.dataset):
        raise AccessDenied("You do not have access to this query's dataset.")
    options.validate()
    settings = current_app.config["SETTINGS"]
    definition = validate_definition(query.definition(), settings.max_export_rows)
    return admit(
        queued_query_file(
            access,
            query,
            definition,
            options,
            source_name=query.name,
            source_version=query.version,
            requested_at=utcnow(),
            request_token=request_key,
        ),
        dispatch_now,
    )
