"""A schedule run's file: queued as its requester would ask for it, and produced in the run's own
process (app/services/schedules/schedule_runs.py decides what the run does with it).

The file goes through the export-file path like any other (same transitions, same storage), its
outbox row claimed by the run's job, so the file dispatcher leaves it alone and the lost-job check
finds it if that job dies. Produced here means: made by this process, or, when another job holds
it (the file's own redelivery, or an earlier attempt's worker alive again), waited for until that
job settles it or its lease lapses.
"""

from __future__ import annotations

import time
from datetime import datetime

from flask import current_app

from app.domain.people.access import RequesterContext
from app.domain.sources.query_spec import validate_definition
from app.extensions import db
from app.models import ExportFile, ExportFileRequest, Report, SavedQuery
from app.models.schedule import Schedule, ScheduleKind
from app.models.types import database_clock
from app.services.files.export_runner import HELD_ELSEWHERE, run_export_file
from app.services.files.file_requests import QueryFileOptions, queued_query_file
from app.services.files.report_files import queued_report_file

FILE_HOLDER_POLL_SECONDS = 1.0


def produced(export_id: int) -> ExportFile:
    """File `export_id` produced in this process, or settled by the job that holds it."""
    while run_export_file(export_id) == HELD_ELSEWHERE:
        # Another job holds the file (the file's own redelivery after this run's worker died, or
        # the earlier attempt's worker, alive again): wait until it settles the file or its lease lapses.
        _wait_for_the_file_s_holder(export_id)
    db.session.rollback()
    export = db.session.get_one(ExportFile, export_id, populate_existing=True)
    # The run goes on with the file as read here (settled, once produced): out of the session, the
    # run's later commits do not have it read again at each use.
    db.session.expunge(export)
    return export


def _wait_for_the_file_s_holder(export_id: int) -> None:
    while True:
        export = db.session.get_one(ExportFile, export_id, populate_existing=True)
        lease_expires_at, settled = export.lease_expires_at, export.is_settled
        db.session.rollback()
        if settled or lease_expires_at is None or lease_expires_at < database_clock():
            return
        time.sleep(FILE_HOLDER_POLL_SECONDS)


def queued_file(schedule: Schedule, requester: RequesterContext, now: datetime) -> tuple[ExportFile, bool]:
    """A queued file of the schedule's source requested by `requester`, claimed by this run's job,
    and whether the report changed since the schedule saw it. Not added to the session.
    ValidationError when the source can no longer be run."""
    settings = current_app.config["SETTINGS"]
    source_changed = False
    if schedule.kind == ScheduleKind.QUERY:
        if schedule.query_definition is None or schedule.query_version is None:
            # The table's check constraint keeps both on every query schedule.
            raise ValueError(f"query schedule {schedule.id} has no query definition or version")
        query = db.session.get(SavedQuery, schedule.source_query_id) if schedule.source_query_id else None
        definition = validate_definition(schedule.query_definition, settings.max_export_rows)
        export = queued_query_file(
            requester,
            query or _SnapshotSource(schedule.source_query_id, definition["dataset"]),
            definition,
            QueryFileOptions(format=schedule.format, heading=schedule.heading),
            source_name=schedule.name,
            source_version=schedule.query_version,
            requested_at=now,
        )
        export.dataset = definition["dataset"]
    else:
        report = db.session.get_one(Report, schedule.report_id)
        query = db.session.get_one(SavedQuery, report.source_query_id)
        source_changed = schedule.report_version_seen is not None and report.version != schedule.report_version_seen
        export = queued_report_file(requester, report, query, schedule.format, now)
    export.schedule_id = schedule.id
    export.outbox = ExportFileRequest(dispatch_count=1, dispatched_at=now, job_id=_current_job_id())
    return export, source_changed


class _SnapshotSource:
    """The saved query a snapshot came from, when only the snapshot is left to read."""

    def __init__(self, query_id: int | None, dataset: str):
        self.id = query_id
        self.dataset = dataset


def _current_job_id() -> str | None:
    from rq import get_current_job

    job = get_current_job()
    return job.id if job is not None else None
