"""Liveness of the shared engines: database, Redis and storage."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from app.extensions import db
from app.services.work.queue import redis_connection
from app.storage import get_storage


def _database() -> None:
    db.session.execute(text("SELECT 1"))


def _redis() -> None:
    redis_connection().ping()


def _storage() -> None:
    get_storage().check()


def check_all() -> dict[str, str]:
    results = {}
    for name, probe in (("database", _database), ("redis", _redis), ("storage", _storage)):
        try:
            probe()
            results[name] = "ok"
        except Exception as exc:  # a health check reports every failure, whatever its kind
            results[name] = f"error: {type(exc).__name__}: {str(exc)[:200]}"
    db.session.rollback()
    return results


def migration_heads() -> tuple[set[str], set[str]]:
    """(the revisions the code's migrations end at, the revisions the database is at)."""
    from alembic.script import ScriptDirectory
    from flask import current_app

    script = ScriptDirectory(str(Path(current_app.root_path).parent / "migrations"))
    code_heads = set(script.get_heads())
    try:
        database_heads = set(db.session.execute(text("SELECT version_num FROM alembic_version")).scalars())
    finally:
        db.session.rollback()
    return code_heads, database_heads


def _coverage() -> str:
    """The word "ok", or how the coverage registry and the declarations disagree (packages are refused then)."""
    from app.services.workspace_export.coverage import registry_disagreement

    try:
        return registry_disagreement() or "ok"
    finally:
        db.session.rollback()


def readiness() -> tuple[bool, dict[str, object]]:
    """Ready to serve: the engines answer, the database is migrated to the code's head, the
    coverage registry matches the declarations (else packages are refused), and at least one
    worker listens on every queue (else work of that priority would wait forever)."""
    from app.services.work.queue import live_workers, work_queues

    checks: dict[str, object] = dict(check_all())
    ready = all(value == "ok" for value in checks.values())
    try:
        code_heads, database_heads = migration_heads()
        checks["migrations"] = "ok"
        if code_heads != database_heads:
            found = sorted(database_heads) or "nothing"
            checks["migrations"] = f"database at {found}, code at {sorted(code_heads)}: run `flask db upgrade`"
    except Exception as exc:  # reported, like the engines' failures
        checks["migrations"] = f"error: {type(exc).__name__}: {str(exc)[:200]}"
    ready = ready and checks["migrations"] == "ok"
    if checks["migrations"] == "ok":
        checks["coverage"] = _coverage()
        ready = ready and checks["coverage"] == "ok"
    try:
        listening = {queue.name: len(live_workers(queue)) for queue in work_queues()}
    except Exception as exc:  # Redis down is reported above; the count is simply unknown
        checks["workers"] = f"error: {type(exc).__name__}"
        ready = False
    else:
        # The fewest workers any queue has: 0 means some kind of work has nobody to take it.
        fewest = min(listening.values())
        checks["workers"] = fewest
        checks["workers_by_queue"] = listening
        ready = ready and fewest > 0
    return ready, checks
