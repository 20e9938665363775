"""Fixtures for the report tests: reports over the standard world, file requests, PDF text."""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from app.domain.people.access import RequesterContext, current_context
from app.extensions import db
from app.models import ExportFile, Person, Report, SavedQuery, TimesheetEntry
from app.services.files.report_files import request_report_file
from tests import factories

_numbers = itertools.count(1)

# Names with their own glyphs: Latin with diacritics, Cyrillic, Greek, CJK, Vietnamese.
UNICODE_NAMES = [
    "Zoë Ødegaard-Łukasiewicz",
    "Дмитрий Шостакович",
    "Σωκράτης Παπαδόπουλος",
    "山田 太郎",
    "김민준",
    "Nguyễn Thị Minh Khai",
    "Ann Lee",
]

TABLE_COLUMNS = [
    {"name": "id", "width": 10},
    {"name": "person_name", "width": 35},
    {"name": "work_date", "width": None},
    {"name": "hours", "width": None},
    {"name": "note", "width": None},
]


@dataclass
class ReportKit:
    """Makes reports and their files in the world's workspace."""

    world: object
    default_query: SavedQuery | None = None

    def query(self, owner: Person | None = None, **overrides) -> SavedQuery:
        values = {
            "name": "Timesheet hours",
            "columns": ["id", "person_name", "team_name", "work_date", "hours", "approved", "note", "project"],
            "sort": [{"column": "id", "direction": "asc"}],
        }
        return factories.make_query(self.world.workspace, owner or self.world.admin, **{**values, **overrides})

    def report(self, query: SavedQuery | None = None, kind: str = "table", **overrides) -> Report:
        """A report stored as the form would save it; without a query, over one shared default query."""
        if query is None:
            self.default_query = self.default_query or self.query()
            query = self.default_query
        values = {
            "workspace_id": query.workspace_id,
            "owner_id": query.owner_id,
            "name": f"{kind.title()} report {next(_numbers)}",
            "kind": kind,
            "source_query_id": query.id,
            "columns": TABLE_COLUMNS if kind != "summary" else [],
            "code_column": "team_name" if kind == "coded" else None,
            "code_descriptions": {"Team A": "Day ward", "Team B": "Night ward"} if kind == "coded" else {},
            "summary": {},
            "title": "Hours worked — Северный корпус",
            "subtitle": "Printed for the ward managers",
            "page_size": "A4",
            "orientation": "portrait",
            "show_filters": True,
            "show_generated_at": True,
        }
        report = Report(**{**values, **overrides})
        db.session.add(report)
        db.session.commit()
        return report

    def access(self, person: Person) -> RequesterContext:
        access = current_context(self.world.workspace.id, person.id)
        assert access is not None
        return access

    def request(
        self, report: Report, file_format: str = "pdf", person: Person | None = None, dispatch_now: bool = False
    ) -> ExportFile:
        """Admission as the report page does it, by default stopped before the immediate dispatch
        so the test drives the dispatcher itself."""
        access = self.access(person or self.world.admin)
        return request_report_file(access, report, file_format, dispatch_now=dispatch_now)

    def add_rows(self, count: int, start: date = date(2026, 10, 1)) -> None:
        """`count` more timesheet rows spread over the world's employees, with Unicode names."""
        employees = self.world.employees
        rows = []
        for index in range(count):
            employee = employees[index % len(employees)]
            rows.append(
                TimesheetEntry(
                    workspace_id=employee.workspace_id,
                    team_id=employee.team_id,
                    team_name=employee.team_name,
                    person_id=employee.id,
                    person_name=UNICODE_NAMES[index % len(UNICODE_NAMES)],
                    work_date=start + timedelta(days=index % 28),
                    hours=Decimal(index % 37) / 4,
                    project=f"Ward {index % 5}",
                    approved=index % 3 != 0,
                    note=f"shift note {index}",
                    recorded_at=datetime(2026, 11, 2, 18, 0, tzinfo=UTC),
                )
            )
        db.session.add_all(rows)
        db.session.commit()


@pytest.fixture
def kit(world) -> ReportKit:
    return ReportKit(world)


PDFTOTEXT_MODES = {"reading": [], "layout": ["-layout"], "raw": ["-raw"]}


def pdf_text(data: bytes, tmp_path, mode: str = "reading") -> str:
    """The text pdftotext (poppler-utils) reads from the PDF; pages are separated by form feeds.

    "reading" orders text as a reader would (right-to-left runs in logical order, but a wrapped
    cell's lines may come apart); "layout" keeps each table row on one line; "raw" keeps the
    order the text was drawn in (a wrapped cell's lines together).
    """
    path = tmp_path / "report.pdf"
    path.write_bytes(data)
    command = ["pdftotext", "-enc", "UTF-8", *PDFTOTEXT_MODES[mode], str(path), "-"]
    return subprocess.run(command, check=True, capture_output=True).stdout.decode("utf-8")


@pytest.fixture
def read_pdf(tmp_path) -> Callable[..., str]:
    return lambda data, mode="reading": pdf_text(data, tmp_path, mode)
