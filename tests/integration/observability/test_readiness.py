"""/readyz: ready only with the engines up, the database at the code's migration head and a worker."""

from __future__ import annotations

import contextlib

from sqlalchemy import text

from app.extensions import db
from app.services.staff.health import migration_heads
from app.services.work.queue import redis_connection
from app.services.workspace_export.coverage import reconcile_coverage
from tests.fixtures.workers import let_the_heartbeat_run_out, wait_for


@contextlib.contextmanager
def database_stamped_at(revision: str):
    (previous,) = migration_heads()[1]
    db.session.execute(text("UPDATE alembic_version SET version_num = :revision"), {"revision": revision})
    db.session.commit()
    try:
        yield
    finally:
        db.session.execute(text("UPDATE alembic_version SET version_num = :revision"), {"revision": previous})
        db.session.commit()


def test_healthz_stays_up_without_workers(client):
    assert client.get("/healthz").status_code == 200


def test_readyz_is_not_ready_while_no_worker_listens(client):
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json["status"] == "not_ready"
    assert response.json["checks"]["workers"] == 0
    assert response.json["checks"]["migrations"] == "ok"


def test_readyz_is_ready_with_a_worker_and_the_database_at_head(app_context, client, rq_worker):
    reconcile_coverage()
    wait_for(lambda: client.get("/readyz").status_code == 200, timeout=30, what="the worker to register")
    checks = client.get("/readyz").json["checks"]
    assert checks["workers"] >= 1
    assert {checks[name] for name in ("database", "redis", "storage", "migrations", "coverage")} == {"ok"}


def test_readyz_says_which_revision_the_database_is_at_when_it_is_behind(app_context, client):
    with database_stamped_at("d81f3a6c5e27"):
        response = client.get("/readyz")
    assert response.status_code == 503
    migrations = response.json["checks"]["migrations"]
    assert "database at ['d81f3a6c5e27']" in migrations
    assert "flask db upgrade" in migrations


def test_a_worker_registers_again_after_redis_lost_its_data(app_context, client, start_worker):
    # A short TTL makes the idle worker's heartbeat (every TTL less 15 s) come within 5 s.
    reconcile_coverage()
    worker = start_worker(WORKER_TTL_SECONDS="20")
    wait_for(lambda: client.get("/readyz").status_code == 200, timeout=30, what="the worker to register")

    redis_connection().flushdb()

    # The worker notices it was forgotten at its next heartbeat (asserting the 503 in between would
    # race that heartbeat), and readiness sees it on every queue again.
    wait_for(lambda: "registering it again" in worker.output(), timeout=30, what="the worker to notice")
    wait_for(lambda: client.get("/readyz").status_code == 200, timeout=30, what="the worker to register again")
    assert set(client.get("/readyz").json["checks"]["workers_by_queue"].values()) == {1}


def test_a_killed_worker_is_not_counted_once_its_heartbeat_ran_out(app_context, client, rq_worker):
    """RQ keeps a killed worker in each queue's worker set; only a live heartbeat counts."""
    reconcile_coverage()
    wait_for(lambda: client.get("/readyz").status_code == 200, timeout=30, what="the worker to register")

    rq_worker.kill()
    let_the_heartbeat_run_out(rq_worker)

    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json["checks"]["workers"] == 0
    assert set(response.json["checks"]["workers_by_queue"].values()) == {0}
