"""The staff console's cross-workspace lists and attention counts (DESIGN section 10).

Every list is newest first with keyset pagination (app/services/keyset.py) and the same filters:
workspace, status, failure code (a schedule's pause reason), and a date range on the record's
creation time. Staff see every workspace; nothing here is for anyone else (the blueprint checks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import InstrumentedAttribute

from app.extensions import db
from app.models import ExportDelivery, ExportExecution, ExportPackage, QueryExport, Schedule, ScheduleRun, Workspace
from app.models.export_file import FileStatus
from app.models.schedule import PauseReason, RunStatus, ScheduleStatus
from app.models.types import utcnow
from app.models.workspace_export import DeliveryStatus, ExecutionStatus, PackageStatus
from app.services import keyset


@dataclass(frozen=True)
class StaffList:
    kind: str
    title: str
    model: (
        type[QueryExport]
        | type[ScheduleRun]
        | type[Schedule]
        | type[ExportExecution]
        | type[ExportPackage]
        | type[ExportDelivery]
    )
    at: InstrumentedAttribute
    statuses: tuple[str, ...]
    code: InstrumentedAttribute | None
    code_label: str = "Failure code"
    # The staff page of one record and its URL argument; None when the list is its own detail.
    detail: tuple[str, str] | None = None


LISTS: dict[str, StaffList] = {
    entry.kind: entry
    for entry in (
        StaffList(
            "files",
            "Files",
            QueryExport,
            QueryExport.requested_at,
            tuple(FileStatus),
            QueryExport.failure_code,
            detail=("staff.file", "file_id"),
        ),
        StaffList(
            "runs",
            "Schedule runs",
            ScheduleRun,
            ScheduleRun.created_at,
            tuple(RunStatus),
            ScheduleRun.failure_code,
            detail=("staff.run", "run_id"),
        ),
        StaffList(
            "schedules",
            "Schedules",
            Schedule,
            Schedule.created_at,
            tuple(ScheduleStatus),
            Schedule.pause_reason,
            "Pause reason",
        ),
        StaffList(
            "executions",
            "Workspace exports",
            ExportExecution,
            ExportExecution.created_at,
            tuple(ExecutionStatus),
            ExportExecution.failure_code,
            detail=("staff.execution", "execution_id"),
        ),
        StaffList(
            "packages",
            "Packages",
            ExportPackage,
            ExportPackage.created_at,
            tuple(PackageStatus),
            None,
            detail=("staff.package", "package_id"),
        ),
        StaffList(
            "deliveries",
            "Package deliveries",
            ExportDelivery,
            ExportDelivery.created_at,
            tuple(DeliveryStatus),
            ExportDelivery.failure_code,
            detail=("staff.delivery", "delivery_id"),
        ),
    )
}


@dataclass(frozen=True)
class Filters:
    workspace_id: int | None = None
    status: str | None = None
    code: str | None = None
    since: date | None = None
    until: date | None = None
    cursor: keyset.Cursor | None = None
    problems: tuple[str, ...] = field(default=())

    def query_args(self) -> dict[str, str]:
        """The filters as URL arguments (without the cursor), for the next page's link."""
        args = {
            "workspace": str(self.workspace_id) if self.workspace_id else None,
            "status": self.status,
            "code": self.code,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
        }
        return {name: value for name, value in args.items() if value}


def parse_filters(staff_list: StaffList, args) -> Filters:
    """Filters from the URL; what cannot be read is dropped and named in `problems`, never a 500."""
    problems = []

    def number(name: str) -> int | None:
        raw = (args.get(name) or "").strip()
        if not raw:
            return None
        if raw.isdigit() and 0 < int(raw) < 2**31:
            return int(raw)
        problems.append(f"“{raw[:40]}” is not a workspace id; showing every workspace.")
        return None

    status = (args.get("status") or "").strip() or None
    if status is not None and status not in staff_list.statuses:
        problems.append(f"“{status[:40]}” is not a status of {staff_list.title.lower()}; showing every status.")
        status = None
    code = (args.get("code") or "").strip()[:60] or None
    if staff_list.code is None:
        code = None
    return Filters(
        workspace_id=number("workspace"),
        status=status,
        code=code,
        since=keyset.day_filter(args, "since", "from", problems),
        until=keyset.day_filter(args, "until", "to", problems),
        cursor=keyset.Cursor.decode(args.get("after")),
        problems=tuple(problems),
    )


def list_page(staff_list: StaffList, filters: Filters) -> keyset.Page:
    """One page of (record, workspace name) rows matching the filters."""
    model = staff_list.model
    statement: Select[Any] = select(model, Workspace.name.label("workspace_name")).join(
        Workspace, Workspace.id == model.workspace_id
    )
    if filters.workspace_id:
        statement = statement.where(model.workspace_id == filters.workspace_id)
    if filters.status:
        statement = statement.where(model.status == filters.status)
    if filters.code and staff_list.code is not None:
        statement = statement.where(staff_list.code == filters.code)
    if filters.since:
        statement = statement.where(staff_list.at >= keyset.day_start(filters.since))
    if filters.until:
        statement = statement.where(staff_list.at < keyset.day_after(filters.until))
    statement = keyset.newest_first(statement, staff_list.at, model.id, filters.cursor)
    rows = db.session.execute(statement).all()
    return keyset.page_of(rows, lambda row: (getattr(row[0], staff_list.at.key), row[0].id))


@dataclass(frozen=True)
class Attention:
    label: str
    count: int
    kind: str | None
    args: dict[str, str]


def attention(now: datetime | None = None) -> list[Attention]:
    """What needs a look now, each with the list that shows it."""
    now = now or utcnow()
    day_ago = now - timedelta(days=1)
    since = day_ago.date().isoformat()

    def count(statement) -> int:
        return db.session.scalar(select(func.count()).select_from(statement.subquery())) or 0

    items = [
        Attention(
            "Files failed in the last day",
            count(
                select(QueryExport.id).where(
                    QueryExport.status == FileStatus.FAILED, QueryExport.requested_at >= day_ago
                )
            ),
            "files",
            {"status": "failed", "since": since},
        ),
        Attention(
            "Schedule runs failed in the last day",
            count(
                select(ScheduleRun.id).where(ScheduleRun.status == RunStatus.FAILED, ScheduleRun.created_at >= day_ago)
            ),
            "runs",
            {"status": "failed", "since": since},
        ),
    ]
    paused = dict(
        db.session.execute(
            select(Schedule.pause_reason, func.count())
            .where(Schedule.status == ScheduleStatus.PAUSED)
            .group_by(Schedule.pause_reason)
        )
        .tuples()
        .all()
    )
    for reason in PauseReason:
        items.append(
            Attention(
                f"Schedules paused: {reason.replace('_', ' ')}",
                paused.get(reason, 0),
                "schedules",
                {"status": "paused", "code": reason},
            )
        )
    for status in (DeliveryStatus.FAILED, DeliveryStatus.WITHHELD):
        items.append(
            Attention(
                f"Package deliveries {status}",
                count(select(ExportDelivery.id).where(ExportDelivery.status == status)),
                "deliveries",
                {"status": status},
            )
        )
    items.append(
        Attention(
            "Workspace exports stalled",
            count(select(ExportExecution.id).where(ExportExecution.failure_code == "stalled")),
            "executions",
            {"status": "failed", "code": "stalled"},
        )
    )
    items.append(
        Attention(
            "Workspace exports failed in the last day",
            count(
                select(ExportExecution.id).where(
                    ExportExecution.status == ExecutionStatus.FAILED, ExportExecution.created_at >= day_ago
                )
            ),
            "executions",
            {"status": "failed", "since": since},
        )
    )
    db.session.rollback()
    return items
