"""The staff console's cross-workspace lists, the records they open, and the attention counts
(DESIGN section 10).

Every list is newest first, a page at a time with the list machinery of app/services/pages/list_pages.py
(signed keyset cursors), and has the same filters: workspace, status, failure code (a schedule's
pause reason), and a date range on the record's creation time. Staff see every workspace;
nothing here is for anyone else (the blueprint checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.orm import InstrumentedAttribute

from app.data.days import within_days
from app.domain.values.text_rules import database_id
from app.extensions import db
from app.models import ExportDelivery, ExportExecution, ExportFile, ExportPackage, Schedule, ScheduleRun, Workspace
from app.models.export_execution import ExecutionFailure, ExecutionStatus
from app.models.export_file import FailureCode, FileStatus
from app.models.export_package import PackageStatus
from app.models.package_delivery import DeliveryStatus
from app.models.schedule import PauseReason, RunStatus, ScheduleStatus
from app.models.types import utcnow
from app.services.pages import list_pages

PAGE_SIZE = 50
Record = TypeVar("Record")


StaffModel = (
    type[ExportFile]
    | type[ScheduleRun]
    | type[Schedule]
    | type[ExportExecution]
    | type[ExportPackage]
    | type[ExportDelivery]
)


@dataclass(frozen=True)
class StaffList:
    kind: str
    title: str
    model: StaffModel
    at: InstrumentedAttribute
    code: InstrumentedAttribute | None
    spec: list_pages.ListSpec
    code_label: str = "Failure code"
    # The staff page of one record and its URL argument; None when the list is its own detail.
    detail: tuple[str, str] | None = None


def _staff_list(
    kind: str,
    title: str,
    model: StaffModel,
    at: InstrumentedAttribute,
    statuses: tuple[str, ...],
    code: InstrumentedAttribute | None,
    code_label: str = "Failure code",
    detail: tuple[str, str] | None = None,
) -> StaffList:
    filters = {
        "workspace": list_pages.ListFilter("Workspace", kind=list_pages.NUMBER),
        "status": list_pages.ListFilter("Status", {status: status for status in statuses}),
        **({"code": list_pages.ListFilter(code_label, kind=list_pages.TEXT)} if code is not None else {}),
        "since": list_pages.ListFilter("From", kind=list_pages.DAY),
        "until": list_pages.ListFilter("To", kind=list_pages.DAY),
    }
    spec = list_pages.ListSpec(
        name=f"staff-{kind}",
        sorts={"newest": list_pages.newest_first(at, model.id)},
        filters=filters,
        search_columns=(),
        page_size=PAGE_SIZE,
    )
    return StaffList(kind, title, model, at, code, spec, code_label, detail)


LISTS: dict[str, StaffList] = {
    entry.kind: entry
    for entry in (
        _staff_list(
            "files",
            "Files",
            ExportFile,
            ExportFile.requested_at,
            tuple(FileStatus),
            ExportFile.failure_code,
            detail=("staff.file", "file_id"),
        ),
        _staff_list(
            "runs",
            "Schedule runs",
            ScheduleRun,
            ScheduleRun.created_at,
            tuple(RunStatus),
            ScheduleRun.failure_code,
            detail=("staff.run", "run_id"),
        ),
        _staff_list(
            "schedules",
            "Schedules",
            Schedule,
            Schedule.created_at,
            tuple(ScheduleStatus),
            Schedule.pause_reason,
            "Pause reason",
        ),
        _staff_list(
            "executions",
            "Workspace exports",
            ExportExecution,
            ExportExecution.created_at,
            tuple(ExecutionStatus),
            ExportExecution.failure_code,
            detail=("staff.execution", "execution_id"),
        ),
        _staff_list(
            "packages",
            "Packages",
            ExportPackage,
            ExportPackage.created_at,
            tuple(PackageStatus),
            None,
            detail=("staff.package", "package_id"),
        ),
        _staff_list(
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


def list_page(staff_list: StaffList, request: list_pages.ListRequest) -> list_pages.Page:
    """One page of (record, workspace name) rows matching the request's filters."""
    model = staff_list.model
    statement: Select[Any] = (
        select(model, Workspace.name.label("workspace_name"))
        .join(Workspace, Workspace.id == model.workspace_id)
        .options(*list_pages.without_json(model))
    )
    workspace_id = request.number("workspace")
    if workspace_id is not None:
        statement = statement.where(model.workspace_id == workspace_id)
    if "status" in request.filters:
        statement = statement.where(model.status == request.filters["status"])
    if "code" in request.filters and staff_list.code is not None:
        statement = statement.where(staff_list.code == request.filters["code"])
    statement = statement.where(*within_days(staff_list.at, request.day("since"), request.day("until")))
    return list_pages.page_of(staff_list.spec, request, statement)


def find_record(model: type[Record], record_id: int) -> Record | None:
    """The record of any workspace with this id, for its staff page; None when there is none (an
    id beyond the database's integer range names none, and is not asked for)."""
    return db.session.get(model, record_id) if database_id(record_id) else None


def workspace_choices(limit: int = 500) -> list[tuple[int, str]]:
    """(id, name) of the workspaces the lists' workspace filter offers, by name."""
    return [
        tuple(row)
        for row in db.session.execute(select(Workspace.id, Workspace.name).order_by(Workspace.name).limit(limit))
    ]


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
                select(ExportFile.id).where(ExportFile.status == FileStatus.FAILED, ExportFile.requested_at >= day_ago)
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
            "Files that failed on a full storage in the last day",
            count(
                select(ExportFile.id).where(
                    ExportFile.failure_code == FailureCode.STORAGE_FULL, ExportFile.requested_at >= day_ago
                )
            ),
            "files",
            {"status": "failed", "code": FailureCode.STORAGE_FULL, "since": since},
        )
    )
    for code, label in (
        (ExecutionFailure.STORAGE_FULL, "Workspace exports that failed on a full storage"),
        (ExecutionFailure.STALLED, "Workspace exports stalled"),
    ):
        items.append(
            Attention(
                label,
                count(select(ExportExecution.id).where(ExportExecution.failure_code == code)),
                "executions",
                {"status": "failed", "code": code},
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
