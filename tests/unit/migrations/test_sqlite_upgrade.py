"""The migrations on SQLite, the embedded default's engine, as `make run` applies them at start-up
(`flask db upgrade` on a fresh instance folder): quietly, and keeping every index the models declare."""

from __future__ import annotations

import warnings

import pytest
from flask_migrate import upgrade
from sqlalchemy import text

from app.extensions import db

# Indexes on lower(name), which SQLite's reflection cannot read back.
EXPRESSION_INDEXES = {
    ("query_exports", "ix_query_exports_list_name"),
    ("saved_queries", "ix_saved_queries_list_name"),
    ("reports", "ix_reports_list_name"),
    ("schedules", "ix_schedules_list_name"),
}


@pytest.fixture
def fresh_sqlite(sqlite_app):
    application = sqlite_app()
    with application.app_context():
        yield application
        db.engine.dispose()


def _sqlite_indexes() -> set[tuple[str, str]]:
    rows = db.session.execute(text("SELECT tbl_name, name FROM sqlite_master WHERE type = 'index'"))
    return {(table, name) for table, name in rows}


def test_upgrading_a_fresh_database_emits_no_warning(fresh_sqlite):
    """A newcomer's first start prints no SQLAlchemy or Alembic warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        upgrade()

    assert [str(warning.message) for warning in caught] == []


def test_upgrading_a_fresh_database_keeps_the_indexes_on_expressions(fresh_sqlite):
    """Copying a table to alter it on SQLite must not drop its index on lower(name)."""
    upgrade()

    assert _sqlite_indexes() >= EXPRESSION_INDEXES


def test_upgrading_makes_again_the_indexes_an_earlier_upgrade_lost(fresh_sqlite):
    """A database upgraded before the copies kept them gets them back."""
    upgrade(revision="7b2e4f9a6c13")
    db.session.execute(text("DROP INDEX ix_query_exports_list_name"))
    db.session.execute(text("DROP INDEX ix_schedules_list_name"))
    db.session.commit()

    upgrade()

    assert _sqlite_indexes() >= EXPRESSION_INDEXES
