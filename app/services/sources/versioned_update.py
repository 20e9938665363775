"""The end of an edit saved with a version-guarded UPDATE, shared by saved queries and reports."""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy.engine import CursorResult

from app.domain.errors import ChangedMeanwhile
from app.extensions import db

Record = TypeVar("Record")


def commit_versioned_update(result: CursorResult, record: Record, noun: str) -> Record:
    """Commit and reload `record` when its UPDATE (guarded by the version the person opened) hit its row.

    No row means someone saved it in between: nothing is written, and ChangedMeanwhile says so.
    """
    if result.rowcount != 1:
        db.session.rollback()
        raise ChangedMeanwhile(noun)
    db.session.commit()
    db.session.refresh(record)
    return record
