"""The statuses the code names are exactly those the database's CHECK constraint admits."""

from __future__ import annotations

import re

from sqlalchemy import text

from app.extensions import db
from app.models.export_file import FileStatus


def test_database_admits_exactly_the_file_statuses_the_code_names(app_context):
    """A status added to FileStatus without a migration (or the reverse) fails here, not in production."""
    definition = db.session.scalar(
        text(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'query_exports'::regclass AND conname = 'ck_query_exports_status'"
        )
    )
    assert set(re.findall(r"'([a-z_]+)'", definition)) == {status.value for status in FileStatus}
