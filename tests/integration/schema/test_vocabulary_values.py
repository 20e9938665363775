"""The kinds, statuses and heading choices the code names are exactly those the migrated database's CHECK
constraints admit (the model side is tests/unit/architecture/test_vocabularies_agree.py)."""

from __future__ import annotations

import re
from enum import StrEnum

import pytest
from sqlalchemy import text

from app.extensions import db
from app.models.export_file import FileKind
from app.models.export_notice import NoticeStatus
from app.models.report import ReportKind
from app.models.schedule import ScheduleKind
from app.vocabulary import Heading


@pytest.mark.parametrize(
    ("table", "constraint", "vocabulary"),
    [
        ("query_exports", "kind", FileKind),
        ("query_exports", "heading", Heading),
        ("schedules", "kind", ScheduleKind),
        ("schedules", "heading", Heading),
        ("reports", "kind", ReportKind),
        ("data_export_notices", "status", NoticeStatus),
    ],
)
def test_database_admits_exactly_the_values_the_code_names(app_context, table, constraint, vocabulary: type[StrEnum]):
    """A value added to a vocabulary without a migration (or the reverse) fails here, not in production."""
    definition = db.session.scalar(
        text(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = CAST(:table AS regclass) AND conname = :name"
        ),
        {"table": table, "name": f"ck_{table}_{constraint}"},
    )
    assert set(re.findall(r"'([a-z_]+)'", definition)) == {member.value for member in vocabulary}
