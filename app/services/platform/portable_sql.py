"""Statements whose spelling differs between PostgreSQL (production, tests) and SQLite (the
embedded default of `make run`): both must run the same code."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite

from app.extensions import db


def insert_ignoring_duplicates(table: Table, unique_columns: Sequence[str]):
    """INSERT … ON CONFLICT (unique_columns) DO NOTHING in the engine's own dialect."""
    dialect = postgresql if db.engine.dialect.name == "postgresql" else sqlite
    return dialect.insert(table).on_conflict_do_nothing(index_elements=list(unique_columns))
