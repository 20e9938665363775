"""INV-13: every table is either a covered dataset table or excluded from packages with a reason.

A table added to the models without a decision fails here, naming the table, so workspace
packages never silently miss (or silently carry) data.
"""

from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, Table

import app.models  # noqa: F401  (registers every table on db.metadata)
from app.domain.workspace_export.coverage import EXCLUDED_TABLES, classification_problems
from app.extensions import db


def test_every_table_is_covered_or_excluded_with_a_reason():
    problems = classification_problems(db.metadata.tables)
    assert problems == [], "\n".join(problems)


def test_a_table_added_without_a_decision_fails_naming_it():
    metadata = MetaData()
    for table in db.metadata.tables.values():
        table.to_metadata(metadata)
    Table("rota_swaps", metadata, Column("id", Integer, primary_key=True))

    problems = classification_problems(metadata.tables)

    assert len(problems) == 1
    assert "'rota_swaps'" in problems[0] and "neither a covered dataset table" in problems[0]


def test_an_exclusion_names_a_table_that_exists():
    problems = classification_problems(set(db.metadata.tables) - {"reports"})
    assert problems == ["excluded table 'reports' does not exist; remove it from EXCLUDED_TABLES"]


def test_every_exclusion_gives_a_reason():
    assert all(reason.strip() for reason in EXCLUDED_TABLES.values())


def test_an_exclusion_with_a_blank_reason_fails_naming_the_table(monkeypatch):
    monkeypatch.setitem(EXCLUDED_TABLES, "reports", "  ")

    problems = classification_problems(db.metadata.tables)

    assert len(problems) == 1 and "'reports'" in problems[0]
