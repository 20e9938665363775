"""The app's Redis client and its RQ export queue, made once with the app.

`init_app` (called by create_app) builds one Redis client, hence one connection pool, per app:
every request, job and periodic task of the process borrows connections from it instead of
opening its own. redis-py's pool notices a fork and starts afresh in the child, so RQ's
work-horses never share their parent's sockets.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, current_app
from redis import Redis
from rq import Queue

# Connections show under this name in Redis's CLIENT LIST.
CLIENT_NAME = "rhythm-exports"

# The key of the app's QueueConnections in app.extensions, where Flask keeps extensions' state.
EXTENSION_KEY = "rhythm_exports_queue"


@dataclass
class QueueConnections:
    redis: Redis
    export_queue: Queue


def init_app(app: Flask) -> None:
    settings = app.config["SETTINGS"]
    redis = Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=10, client_name=CLIENT_NAME)
    app.extensions[EXTENSION_KEY] = QueueConnections(
        redis=redis, export_queue=Queue(settings.export_queue, connection=redis)
    )


def queue_connections(app: Flask | None = None) -> QueueConnections:
    """The Redis client and export queue of `app`, by default the current one."""
    connections: QueueConnections = (app or current_app).extensions[EXTENSION_KEY]
    return connections


def redis_connection() -> Redis:
    return queue_connections().redis


def export_queue() -> Queue:
    return queue_connections().export_queue
