"""The RQ queue and Redis connection, built from settings."""

from __future__ import annotations

from flask import current_app
from redis import Redis
from rq import Queue


def settings():
    return current_app.config["SETTINGS"]


def redis_connection() -> Redis:
    return Redis.from_url(settings().redis_url, socket_connect_timeout=2, socket_timeout=10)


def export_queue() -> Queue:
    return Queue(settings().export_queue, connection=redis_connection())
