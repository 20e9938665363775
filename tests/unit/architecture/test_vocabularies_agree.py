"""Each closed vocabulary is one StrEnum, and everything else that lists its values lists exactly them:
the models' CHECK constraints, the choices forms and lists offer, and the tables keyed by it. A value
added in one place only fails here. (tests/integration/schema/test_vocabulary_values.py checks the
migrated database's constraints the same way.)"""

from __future__ import annotations

import re
from enum import StrEnum

import pytest
from sqlalchemy import CheckConstraint

import app.models  # noqa: F401  (registers every table on db.metadata)
from app.blueprints.schedules.routes import FREQUENCIES as FORM_FREQUENCIES
from app.domain.schedules.schedule_rules import QUERY_FORMATS as SCHEDULE_QUERY_FORMATS
from app.domain.sources.report_spec import KIND_LABELS
from app.domain.timing.timetable import TimetableKind
from app.extensions import db
from app.models.export_file import FORMAT_LABELS, FileFormat, FileKind
from app.models.report import Report, ReportKind
from app.models.schedule import ScheduleKind
from app.services.files import export_runner, file_library, file_requests, report_files
from app.services.schedules import legacy_import, schedule_form
from app.services.sources import reports
from app.vocabulary import Heading


def _check_literals(table: str, constraint: str) -> set[str]:
    """The quoted values in one of the models' CHECK constraints (named as the database names it)."""
    name = f"ck_{table}_{constraint}"
    (check,) = [c for c in db.metadata.tables[table].constraints if isinstance(c, CheckConstraint) and c.name == name]
    return set(re.findall(r"'([^']*)'", str(check.sqltext)))


def _values(vocabulary: type[StrEnum]) -> set[str]:
    return {member.value for member in vocabulary}


@pytest.mark.parametrize(
    ("table", "constraint", "vocabulary"),
    [
        ("query_exports", "kind", FileKind),
        ("query_exports", "heading", Heading),
        ("schedules", "kind", ScheduleKind),
        ("schedules", "heading", Heading),
        ("reports", "kind", ReportKind),
    ],
)
def test_a_check_constraint_admits_exactly_the_vocabulary(table, constraint, vocabulary):
    assert _check_literals(table, constraint) == _values(vocabulary)


def test_a_files_shape_names_only_kinds_formats_and_report_kinds_and_admits_every_format():
    named = _check_literals("query_exports", "source_shape")
    assert named <= _values(FileKind) | _values(FileFormat) | _values(ReportKind)
    assert _values(FileKind) | _values(FileFormat) | _values(ReportKind) <= named


def test_a_schedules_shape_names_exactly_its_kinds_and_the_file_formats():
    assert _check_literals("schedules", "source_shape") == _values(ScheduleKind) | _values(FileFormat)


@pytest.mark.parametrize(
    ("offered", "vocabulary"),
    [
        (file_requests.HEADINGS, Heading),
        (schedule_form.HEADINGS, Heading),
        (FORMAT_LABELS, FileFormat),
        (file_library.FILE_LIST.filters["format"].choices, FileFormat),
        (file_library.FILE_LIST.filters["source"].choices, FileKind),
        (file_library.MIME_TYPES, FileFormat),
        (export_runner.WRITERS, FileKind),
        (KIND_LABELS, ReportKind),
        (reports.REPORT_LIST.filters["kind"].choices, ReportKind),
        (FORM_FREQUENCIES, TimetableKind),
        (legacy_import.FREQUENCIES.values(), TimetableKind),
        (legacy_import.SOURCE_TYPES.values(), ScheduleKind),
    ],
    ids=[
        "file request headings",
        "schedule form headings",
        "schedule form formats",
        "Files list format filter",
        "Files list source filter",
        "download content types",
        "file writers",
        "report form kinds",
        "Reports list kind filter",
        "schedule form frequencies",
        "legacy import frequencies",
        "legacy import sources",
    ],
)
def test_what_is_offered_or_handled_is_exactly_the_vocabulary(offered, vocabulary):
    assert set(offered) == _values(vocabulary)


def test_query_files_are_csv_or_xlsx_wherever_they_are_asked_for():
    assert set(file_requests.QUERY_FORMATS) == set(SCHEDULE_QUERY_FORMATS) == {FileFormat.CSV, FileFormat.XLSX}


def test_the_report_file_form_labels_every_format_some_report_kind_allows():
    allowed = {file_format for kind in ReportKind for file_format in Report(kind=kind).formats}
    assert set(report_files.REPORT_FORMATS) == allowed
