"""The numbers behind a workspace's activity charts: files per day by outcome, schedule runs per
day by outcome, and each package's size and duration. Each chart's page shows the same numbers
as a table beside it.

A chart lists its value axes (`axes`: id, title, whether its values are whole numbers; a list, since
the page's JSON sorts an object's keys and the first axis goes on the left) and
each series the axis it is drawn against, so quantities of different units (bytes and seconds)
never share one scale and counts never get fractional ticks. A chart without any value is not
drawn at all: the page says "Nothing yet" instead of a flat line at zero."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import func, select

from app.extensions import db
from app.models import ExportExecution, ExportFile, ExportPackage, ScheduleRun
from app.models.export_file import ACTIVE_FILE_STATUSES, FileStatus
from app.models.schedule import ACTIVE_RUN_STATUSES, RunStatus
from app.models.types import utcnow

DAYS = 30
PACKAGES = 30


@dataclass(frozen=True)
class DailySeries:
    """Counts per day (oldest first) for each outcome, every day of the window present."""

    days: list[date]
    outcomes: dict[str, list[int]]

    def rows(self) -> list[tuple[date, list[int]]]:
        return [(day, [counts[index] for counts in self.outcomes.values()]) for index, day in enumerate(self.days)]

    @property
    def is_empty(self) -> bool:
        return not any(any(values) for values in self.outcomes.values())

    def as_chart(self) -> dict:
        return {
            "labels": [day.isoformat() for day in self.days],
            "axes": [{"id": "count", "title": "Count", "whole": True}],
            "series": [{"name": name, "values": values, "axis": "count"} for name, values in self.outcomes.items()],
        }


def _as_date(value) -> date:
    # SQLite's date() gives text, PostgreSQL's a date.
    return value if isinstance(value, date) else date.fromisoformat(value)


def _daily(
    column, status_column, workspace_column, workspace_id: int, outcomes: dict[str, tuple[str, ...]], now: datetime
) -> DailySeries:
    first_day = (now - timedelta(days=DAYS - 1)).date()
    day = func.date(column)
    counted = db.session.execute(
        select(day, status_column, func.count())
        .where(
            workspace_column == workspace_id,
            column >= datetime.combine(first_day, datetime.min.time(), tzinfo=now.tzinfo),
        )
        .group_by(day, status_column)
    ).all()
    db.session.rollback()
    days = [first_day + timedelta(days=offset) for offset in range(DAYS)]
    index = {value: position for position, value in enumerate(days)}
    series = {name: [0] * DAYS for name in outcomes}
    for counted_day, status, count in counted:
        position = index.get(_as_date(counted_day))
        name = next((name for name, statuses in outcomes.items() if status in statuses), None)
        if position is not None and name is not None:
            series[name][position] += count
    return DailySeries(days, series)


def files_per_day(workspace_id: int, now: datetime | None = None) -> DailySeries:
    return _daily(
        ExportFile.requested_at,
        ExportFile.status,
        ExportFile.workspace_id,
        workspace_id,
        {"succeeded": (FileStatus.SUCCEEDED,), "failed": (FileStatus.FAILED,), "in progress": ACTIVE_FILE_STATUSES},
        now or utcnow(),
    )


def runs_per_day(workspace_id: int, now: datetime | None = None) -> DailySeries:
    return _daily(
        ScheduleRun.created_at,
        ScheduleRun.status,
        ScheduleRun.workspace_id,
        workspace_id,
        {"succeeded": (RunStatus.SUCCEEDED,), "failed": (RunStatus.FAILED,), "in progress": ACTIVE_RUN_STATUSES},
        now or utcnow(),
    )


@dataclass(frozen=True)
class PackageLine:
    package_id: int
    created_at: datetime
    size_bytes: int
    seconds: float | None


def package_history(workspace_id: int) -> list[PackageLine]:
    """The latest packages, oldest first: size, and how long their execution ran."""
    rows = db.session.execute(
        select(
            ExportPackage.id,
            ExportPackage.created_at,
            ExportPackage.size_bytes,
            ExportExecution.started_at,
            ExportExecution.completed_at,
        )
        .join(ExportExecution, ExportExecution.id == ExportPackage.execution_id)
        .where(ExportPackage.workspace_id == workspace_id)
        .order_by(ExportPackage.created_at.desc(), ExportPackage.id.desc())
        .limit(PACKAGES)
    ).all()
    db.session.rollback()
    return [
        PackageLine(
            row.id,
            row.created_at,
            row.size_bytes,
            (row.completed_at - row.started_at).total_seconds() if row.completed_at and row.started_at else None,
        )
        for row in reversed(rows)
    ]


def packages_chart(lines: list[PackageLine]) -> dict:
    return {
        "labels": [f"#{line.package_id} {line.created_at:%Y-%m-%d}" for line in lines],
        "axes": [
            {"id": "size", "title": "Size (MB)", "whole": False},
            {"id": "duration", "title": "Duration (s)", "whole": False},
        ],
        "series": [
            {
                "name": "size (MB)",
                "values": [round(line.size_bytes / 1_000_000, 3) for line in lines],
                "axis": "size",
            },
            {
                "name": "duration (s)",
                "values": [round(line.seconds, 1) if line.seconds is not None else None for line in lines],
                "axis": "duration",
            },
        ],
    }
