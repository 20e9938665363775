"""Liveness of the shared engines: database, Redis and storage."""

from __future__ import annotations

from sqlalchemy import text

from app.extensions import db
from app.services.queue import redis_connection
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
