"""The app's Redis client and its RQ export queue, made once with the app.

`init_app` (called by create_app) builds one Redis client, hence one connection pool, per app:
every request, job and periodic task of the process borrows connections from it instead of
opening its own. redis-py's pool notices a fork and starts afresh in the child, so RQ's
work-horses never share their parent's sockets.
"""

from __future__ import annotations

from flask import Flask, current_app
from redis import Redis
from rq import Queue

# Connections show under this name in Redis's CLIENT LIST.
CLIENT_NAME = "rhythm-exports"


def init_app(app: Flask) -> None:
    settings = app.config["SETTINGS"]
    app.redis = Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=10, client_name=CLIENT_NAME)
    app.export_queue = Queue(settings.export_queue, connection=app.redis)


def redis_connection() -> Redis:
    return current_app.redis


def export_queue() -> Queue:
    return current_app.export_queue
