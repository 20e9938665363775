"""Small factory helpers: each makes one record with sensible defaults and commits it.

Call them inside an app context. Keyword arguments override any column.
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from app.domain.files import export_file
from app.domain.timing.timetable import Timetable, next_occurrence
from app.extensions import db
from app.models import (
    CommunicationTemplate,
    CommunicationTemplateVersion,
    ExportDelivery,
    ExportDestination,
    ExportExecution,
    ExportFile,
    ExportFileRequest,
    ExportNotice,
    ExportPackage,
    ExportSettings,
    ExportVolume,
    Membership,
    Person,
    RecipientDelivery,
    Report,
    SavedQuery,
    Schedule,
    ScheduleRun,
    Shift,
    Team,
    TeamMember,
    TimeOffRequest,
    TimesheetEntry,
    Workspace,
)
from app.models.schedule import ScheduleRecipient
from app.models.types import utcnow
from app.seed_data import HOSTILE_VALUES
from app.services.accounts.authentication import hash_password
from app.services.workspace_export.coverage import reconcile_coverage
from app.storage import get_storage

PASSWORD = "password"
_sequence = itertools.count(1)
_PASSWORD_HASH = hash_password(PASSWORD)


def hostile_values() -> list[str]:
    """The hostile values every export path must survive (the demo seed uses the same list)."""
    return list(HOSTILE_VALUES)


def _save(record):
    db.session.add(record)
    db.session.commit()
    return record


def make_workspace(**overrides) -> Workspace:
    n = next(_sequence)
    return _save(Workspace(**{"name": f"Workspace {n}", "status": "live", "sandbox": False, **overrides}))


def make_person(**overrides) -> Person:
    n = next(_sequence)
    values = {"email": f"person{n}@example.test", "name": f"Person {n}", "password_hash": _PASSWORD_HASH}
    return _save(Person(**{**values, **overrides}))


def make_member(workspace: Workspace, role: str = "member", **overrides) -> Membership:
    """A person and their membership; grants every dataset unless dataset_grants says otherwise."""
    person = overrides.pop("person", None) or make_person()
    values = {
        "workspace_id": workspace.id,
        "person_id": person.id,
        "role": role,
        "grants": [],
        "dataset_grants": ["teams", "people", "shifts", "time_off_requests", "timesheet_entries"],
        "team_scope": None,
    }
    return _save(Membership(**{**values, **overrides}))


def make_team(workspace: Workspace, **overrides) -> Team:
    n = next(_sequence)
    values = {
        "workspace_id": workspace.id,
        "code": f"T{n}",
        "name": f"Team {n}",
        "location": "Lyon",
        "created_at": datetime(2024, 1, 1, 9, 0, tzinfo=UTC),
    }
    return _save(Team(**{**values, **overrides}))


def make_team_member(team: Team, **overrides) -> TeamMember:
    n = next(_sequence)
    values = {
        "workspace_id": team.workspace_id,
        "team_id": team.id,
        "team_name": team.name,
        "full_name": f"Employee {n}",
        "email": f"employee{n}@example.test",
        "job_title": "Nurse",
        "hourly_rate": Decimal("21.50"),
        "started_on": date(2022, 3, 1),
        "active": True,
    }
    return _save(TeamMember(**{**values, **overrides}))


def make_timesheet_entry(employee: TeamMember, **overrides) -> TimesheetEntry:
    values = {
        "workspace_id": employee.workspace_id,
        "team_id": employee.team_id,
        "team_name": employee.team_name,
        "person_id": employee.id,
        "person_name": employee.full_name,
        "work_date": date(2026, 11, 2),
        "hours": Decimal("7.50"),
        "project": "Ward A",
        "approved": True,
        "note": "",
        "recorded_at": datetime(2026, 11, 2, 18, 0, tzinfo=UTC),
    }
    return _save(TimesheetEntry(**{**values, **overrides}))


def make_shift(employee: TeamMember, **overrides) -> Shift:
    start = datetime(2026, 11, 2, 7, 0, tzinfo=UTC)
    values = {
        "workspace_id": employee.workspace_id,
        "team_id": employee.team_id,
        "team_name": employee.team_name,
        "person_id": employee.id,
        "person_name": employee.full_name,
        "role": "Day shift",
        "starts_at": start,
        "ends_at": start + timedelta(hours=8),
        "break_minutes": 30,
        "notes": "",
    }
    return _save(Shift(**{**values, **overrides}))


def make_time_off(employee: TeamMember, **overrides) -> TimeOffRequest:
    values = {
        "workspace_id": employee.workspace_id,
        "team_id": employee.team_id,
        "team_name": employee.team_name,
        "person_id": employee.id,
        "person_name": employee.full_name,
        "kind": "annual",
        "status": "approved",
        "starts_on": date(2026, 12, 21),
        "ends_on": date(2026, 12, 24),
        "days": Decimal("4.0"),
        "reason": "",
        "submitted_at": datetime(2026, 11, 1, 10, 0, tzinfo=UTC),
    }
    return _save(TimeOffRequest(**{**values, **overrides}))


def make_query(workspace: Workspace, owner: Person, **overrides) -> SavedQuery:
    n = next(_sequence)
    values = {
        "workspace_id": workspace.id,
        "owner_id": owner.id,
        "name": f"Query {n}",
        "dataset": "timesheet_entries",
        "columns": ["id", "person_name", "team_name", "work_date", "hours", "approved", "note"],
        "filters": [],
        "sort": [{"column": "id", "direction": "asc"}],
        "parameters": [],
        "row_limit": None,
    }
    return _save(SavedQuery(**{**values, **overrides}))


def make_report(query: SavedQuery, owner: Person, **overrides) -> Report:
    """A table report of the query printing its hours column."""
    n = next(_sequence)
    values = {
        "workspace_id": query.workspace_id,
        "owner_id": owner.id,
        "name": f"Report {n}",
        "kind": "table",
        "source_query_id": query.id,
        "columns": [{"name": "hours", "width": None}],
        "title": f"Report {n}",
    }
    return _save(Report(**{**values, **overrides}))


def stored_request(query: SavedQuery) -> dict:
    """The request JSON admission stores for the query, with no date range worked out."""
    definition = query.definition()
    del definition["parameters"]
    return {**definition, "parameters_applied": []}


def make_export(query: SavedQuery, requester: Person, **overrides) -> ExportFile:
    """A queued file with its outbox row, as admission would leave it (without substitution)."""
    n = next(_sequence)
    fmt = overrides.pop("format", "csv")
    values = {
        "workspace_id": query.workspace_id,
        "requester_id": requester.id,
        "kind": "query",
        "source_query_id": query.id,
        "source_name": query.name,
        "source_version": query.version,
        "dataset": query.dataset,
        "request": stored_request(query),
        "format": fmt,
        "heading": "names",
        "include_descriptions": False,
        "status": "queued",
        "storage_key": f"files/w{query.workspace_id}/test-{n}.{fmt}",
        "file_name": f"query-{n}.{fmt}",
    }
    export = ExportFile(**{**values, **overrides})
    export.outbox = ExportFileRequest()
    return _save(export)


def make_stored_file(query: SavedQuery, requester: Person, content: bytes, **overrides) -> ExportFile:
    """A succeeded file with `content` stored at its key, settled as a worker settles one."""
    export = make_export(query, requester, **overrides)
    attempt = export_file.start(export.id)
    get_storage().put_bytes(export.storage_key, content)
    export_file.succeed(export.id, attempt, size_bytes=len(content), row_count=1, retention_days=30)
    db.session.refresh(export)
    return export


# --- Schedules, their runs and recipient deliveries, message templates (rows written directly) ---


def make_schedule(query: SavedQuery, owner: Person, **overrides) -> Schedule:
    """An active daily query schedule of `query`, owned by `owner`, sending to the owner."""
    n = next(_sequence)
    timetable = {"kind": "daily", "time": "07:00", "zone": "Europe/London"}
    values = {
        "workspace_id": query.workspace_id,
        "name": f"Schedule {n}",
        "kind": "query",
        "owner_id": owner.id,
        "format": "csv",
        "source_query_id": query.id,
        "query_definition": query.definition(),
        "query_version": query.version,
        "timetable": timetable,
        "next_occurrence_at": next_occurrence(Timetable.from_json(timetable, "UTC"), utcnow()),
    }
    schedule = Schedule(**{**values, **overrides})
    schedule.recipients = [ScheduleRecipient(person_id=owner.id, address_key=f"person:{owner.id}", position=0)]
    return _save(schedule)


def make_run(schedule: Schedule, export: ExportFile | None = None, **overrides) -> ScheduleRun:
    """A succeeded run of the schedule that produced `export` (the file's schedule_id is set to it)."""
    if export is not None:
        export.schedule_id = schedule.id
    values = {
        "workspace_id": schedule.workspace_id,
        "schedule_id": schedule.id,
        "occurrence_at": datetime(2026, 11, 30, 6, 0, tzinfo=UTC) + timedelta(minutes=next(_sequence)),
        "status": "succeeded",
        "attempt_count": 1,
        "export_id": export.id if export is not None else None,
    }
    return _save(ScheduleRun(**{**values, **overrides}))


def make_delivery(run: ScheduleRun, person: Person | None = None, email: str | None = None, **overrides):
    """A submitted recipient delivery of the run, to a person of the workspace or to an address."""
    n = next(_sequence)
    if person is None and email is None:
        email = f"recipient{n}@example.test"
    values = {
        "run_id": run.id,
        "address_key": f"person:{person.id}" if person is not None else email.lower(),
        "person_id": person.id if person is not None else None,
        "email": email,
        "status": "submitted",
        "submission_id": f"queue-{n}",
        "link_nonce": secrets.token_urlsafe(24),
    }
    return _save(RecipientDelivery(**{**values, **overrides}))


def make_template(workspace: Workspace, author: Person, published: bool = False, **overrides):
    """A message template with version 1, a draft unless `published`."""
    n = next(_sequence)
    template = CommunicationTemplate(
        workspace_id=workspace.id, name=overrides.pop("name", f"Template {n}"), created_by_id=author.id
    )
    values = {
        "number": 1,
        "status": "published" if published else "draft",
        "published_at": datetime(2026, 11, 1, 9, 0, tzinfo=UTC) if published else None,
        "subject": f"Subject {n}",
        "body": f"Body {n}",
        "created_by_id": author.id,
    }
    template.versions.append(CommunicationTemplateVersion(**{**values, **overrides}))
    return _save(template)


# Workspace export


def make_export_settings(workspace: Workspace, **overrides) -> ExportSettings:
    """Active settings covering every dataset, CSV, 256 MB volumes, kept 7 days, no cadence."""
    values = {
        "workspace_id": workspace.id,
        "datasets": ["teams", "people", "shifts", "time_off_requests", "timesheet_entries"],
        "format": "csv",
        "volume_size_mb": 256,
        "retention_days": 7,
        "cadence": "off",
        "notify_person_ids": [],
        "status": "active",
    }
    return _save(ExportSettings(**{**values, **overrides}))


def make_destination(workspace: Workspace, **overrides) -> ExportDestination:
    """An enabled directory destination (the root is the app's DESTINATIONS_ROOT); pass kind="s3"
    with bucket, access_key_id and secret_ciphertext for a bucket signing with a key (or with
    s3_access="role" and role_arn for one by role)."""
    n = next(_sequence)
    values = {
        "workspace_id": workspace.id,
        "name": f"Destination {n}",
        "kind": "directory",
        "connection_key": "directory:",
        "path": f"exports/d{n}",
        "enabled": True,
    }
    if overrides.get("kind") == "s3":
        values["s3_access"] = "access_key"
    return _save(ExportDestination(**{**values, **overrides}))


def settings_snapshot(settings: ExportSettings | None = None, **overrides) -> dict:
    """The copy of the settings an execution keeps (volume_size_bytes may be set small in tests)."""
    values = {
        "datasets": list(settings.datasets) if settings else ["teams", "people"],
        "format": settings.format if settings else "csv",
        "volume_size_bytes": (settings.volume_size_mb if settings else 256) * 1024 * 1024,
        "retention_days": settings.retention_days if settings else 7,
        "notify_person_ids": list(settings.notify_person_ids) if settings else [],
        "settings_version": settings.version if settings else 1,
    }
    return {**values, **overrides}


def make_execution(workspace: Workspace, requester: Person | None = None, **overrides) -> ExportExecution:
    """A queued manual execution of the workspace with a default settings snapshot, the coverage
    registry reconciled (as every start-up does) so that it may be produced."""
    reconcile_coverage()
    values = {
        "workspace_id": workspace.id,
        "trigger": "manual",
        "requested_by_id": requester.id if requester is not None else None,
        "cutoff_at": utcnow(),
        "settings_snapshot": settings_snapshot(),
        "allowance_used": 1,
        "allowance_limit": workspace.export_allowance,
        "status": "queued",
    }
    return _save(ExportExecution(**{**values, **overrides}))


def make_package(execution: ExportExecution, **overrides) -> ExportPackage:
    """An available package row of a succeeded execution (no stored bytes unless the test adds them)."""
    execution.status = overrides.pop("execution_status", "succeeded")
    execution.attempt_count = max(execution.attempt_count, 1)
    now = utcnow()
    prefix = f"packages/w{execution.workspace_id}/e{execution.id}/a{execution.attempt_count}/"
    values = {
        "uid": secrets.token_hex(16),
        "workspace_id": execution.workspace_id,
        "execution_id": execution.id,
        "status": "available",
        "format": "csv",
        "cutoff_at": execution.cutoff_at,
        "prefix": prefix,
        "manifest_key": prefix + "manifest.json",
        "manifest_size": 0,
        "manifest_sha256": "0" * 64,
        "datasets_count": 0,
        "row_count": 0,
        "size_bytes": 0,
        "volumes_count": 0,
        "retention_days": 7,
        "expires_at": now + timedelta(days=7),
        "created_at": now,
    }
    return _save(ExportPackage(**{**values, **overrides}))


def make_stored_volume(package: ExportPackage, content: bytes, dataset: str = "teams") -> ExportVolume:
    """The package's first complete volume of `dataset`, with `content` stored at its key."""
    volume = _save(
        ExportVolume(
            execution_id=package.execution_id,
            attempt=1,
            dataset=dataset,
            sequence=1,
            key=f"{package.prefix}{dataset}-0001.csv.zip",
            status="complete",
            row_count=1,
            size_bytes=len(content),
            sha256=hashlib.sha256(content).hexdigest(),
        )
    )
    get_storage().put_bytes(volume.key, content)
    return volume


def make_package_delivery(package: ExportPackage, destination: ExportDestination, **overrides) -> ExportDelivery:
    """A pending delivery of the package to the destination."""
    values = {
        "workspace_id": package.workspace_id,
        "package_id": package.id,
        "destination_id": destination.id,
        "status": "pending",
    }
    return _save(ExportDelivery(**{**values, **overrides}))


def make_package_ready_notice(package: ExportPackage, person: Person, **overrides) -> ExportNotice:
    """A pending PACKAGE_READY notice of the package to the person, never tried: as `notify`
    records it before sending."""
    values = {
        "workspace_id": package.workspace_id,
        "subject_type": "package",
        "subject_id": package.id,
        "kind": "package_ready",
        "person_id": person.id,
        "status": "pending",
    }
    return _save(ExportNotice(**{**values, **overrides}))
