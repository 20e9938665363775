"""/healthz reports the database, Redis and storage, and answers 503 when one is down."""

import dataclasses
import os
from pathlib import Path

from redis import Redis

from app.services.work.queue import CLIENT_NAME
from tests.conftest import TEST_REDIS_URL


def test_health_is_ok_when_every_engine_answers(client):
    """All three checks pass on the test services: 200 with status ok."""
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "checks": {"database": "ok", "redis": "ok", "storage": "ok"}}


def test_health_is_503_when_redis_does_not_answer(app_for, settings):
    """A Redis that refuses connections makes the check fail and names the error."""
    unreachable = dataclasses.replace(settings, redis_url="redis://127.0.0.1:1/0")
    response = app_for(unreachable).test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json["checks"]["redis"].startswith("error:")
    assert response.json["checks"]["database"] == "ok"


def test_health_is_503_when_storage_cannot_be_written(app_for, settings, tmp_path):
    """A storage directory that cannot exist (its parent is a file) fails the storage check."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    unwritable = dataclasses.replace(settings, storage_url=(blocker / "storage").as_uri())
    response = app_for(unwritable).test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json["checks"]["storage"].startswith("error:")


def _local_tcp_ports() -> set[int]:
    """The local ports of this process's TCP sockets (Linux: its descriptors' inodes in /proc/net/tcp*)."""
    inodes = set()
    for descriptor in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(descriptor)
        except OSError:
            continue  # closed while listed
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _app_connections(observer: Redis) -> list[dict]:
    """Connections the app under test, in this process, holds to the test Redis database, as Redis
    lists them: a worker process started by an earlier test may open its own meanwhile."""
    database = str(observer.connection_pool.connection_kwargs.get("db", 0))
    ours = _local_tcp_ports()
    return [
        c
        for c in observer.client_list()
        if c["name"] == CLIENT_NAME and str(c["db"]) == database and int(c["addr"].rsplit(":", 1)[1]) in ours
    ]


def test_requests_share_the_apps_one_redis_connection(client):
    """The app's Redis pool is made once: request after request reuses its connections and opens none.

    The pool may already hold several connections that earlier tests' threads opened, so the
    test compares the set of connections before and after, not their number."""
    observer = Redis.from_url(TEST_REDIS_URL)
    assert client.get("/healthz").status_code == 200
    pooled = {c["id"] for c in _app_connections(observer)}

    for _ in range(5):
        assert client.get("/healthz").status_code == 200

    assert pooled
    assert {c["id"] for c in _app_connections(observer)} == pooled
