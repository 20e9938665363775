"""Shared fixtures: the app on the real PostgreSQL and Redis, a client, sign-in, factories.

Integration and browser tests run against real services. When one is missing the run fails
with a message saying which; nothing is skipped. The services are reached only by the fixtures
that need them (`test_environment`, `app` and what builds on them), so `tests/unit`, which asks
for none of those, runs on a machine with neither: `make test` runs it with both URLs pointing
at a closed port to keep it so.

Under pytest-xdist (`make test` runs the integration and browser tiers on several worker
processes, PYTEST_XDIST_WORKER = gw0, gw1, …), each worker has services of its own, so one
worker's emptying of the tables and FLUSHDB before each test never reaches another's tests:

- PostgreSQL: the database TEST_DATABASE_URL names, with `_gw0`, `_gw1`, … appended.
- Redis: worker gwN uses TEST_REDIS_URL's database number minus N (15, 14, 13, … by default), so
  the base must be at least the number of workers less one; a worker left without one fails.

Everything else the app and the worker subprocesses it starts are given follows from these
(DATABASE_URL, REDIS_URL and the export queue on it) or is per process already (the temporary
folders, and the ports of the moto, SMTP and live servers, which the kernel picks).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from redis import Redis
from sqlalchemy import text
from sqlalchemy.engine import make_url

# "gw0", "gw1", … in a pytest-xdist worker; None in a run without xdist.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")


def _worker_database_url(url: str) -> str:
    if XDIST_WORKER is None:
        return url
    parsed = make_url(url)
    return parsed.set(database=f"{parsed.database}_{XDIST_WORKER}").render_as_string(hide_password=False)


def _redis_database_number(url: str) -> int:
    path = urlsplit(url).path.strip("/")
    return int(path) if path else 0


def _worker_redis_url(url: str) -> str:
    if XDIST_WORKER is None:
        return url
    number = _redis_database_number(url) - int(XDIST_WORKER.removeprefix("gw"))
    return urlunsplit(urlsplit(url)._replace(path=f"/{number}"))


TEST_DATABASE_URL = _worker_database_url(
    os.environ.get("TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/rhythm_test")
)
TEST_REDIS_URL = _worker_redis_url(os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15"))

pytest_plugins = [
    "tests.fixtures.apps",
    "tests.fixtures.s3",
    "tests.fixtures.factories",
    "tests.fixtures.browser",
    "tests.fixtures.workers",
    "tests.fixtures.smtp",
    "tests.fixtures.destinations",
    "tests.fixtures.sftp_server",
    "tests.fixtures.message_receiver",
]


def _ensure_database(url: str) -> None:
    """Create the test database if it is missing; fail loudly if PostgreSQL does not answer.

    Its sessions (the tests', the app's and the workers') commit without waiting for the WAL to
    reach the disk: a commit is as visible to other sessions as ever, only a crash of PostgreSQL
    could lose the last few, and a test database is rebuilt by every run anyway. The tests commit
    thousands of times, and on a slow disk that wait took up to a third of an integration test's time.
    """
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    base, name = plain.rsplit("/", 1)
    try:
        with psycopg.connect(f"{base}/postgres", autocommit=True, connect_timeout=5) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{name}"')
            conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL is required for the tests and did not answer at {base}: {exc}", pytrace=False)


def _ensure_redis(url: str) -> None:
    if _redis_database_number(url) < 0:
        pytest.fail(
            f"pytest-xdist worker {XDIST_WORKER} has no Redis database of its own: worker gwN uses "
            "TEST_REDIS_URL's database number minus N, so give a base of at least the number of workers less one.",
            pytrace=False,
        )
    try:
        Redis.from_url(url, socket_connect_timeout=3).ping()
    except Exception as exc:  # any failure here means the service is missing
        pytest.fail(f"Redis is required for the tests and did not answer at {url}: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def app_environment():
    """The app's settings for tests (SQLite-backed unit tests use them too); reaches no service."""
    root = Path(tempfile.mkdtemp(prefix="rhythm-test-"))
    env = {
        "DATABASE_URL": TEST_DATABASE_URL,
        "REDIS_URL": TEST_REDIS_URL,
        "STORAGE_URL": (root / "storage").as_uri(),
        "MAIL_URL": (root / "outbox").as_uri(),
        "SECRET_KEY": "test-secret-key",
        "CREDENTIALS_KEY": "test-credentials-key",
        "EXPORT_QUEUE": "test-exports",
        "STORAGE_PART_SIZE": str(64 * 1024),
        # moto's S3 server, the customers' stores of the tests, listens on this server's loopback.
        "DESTINATION_ALLOWED_HOSTS": "127.0.0.1",
    }
    os.environ.update(env)
    return env


@pytest.fixture(scope="session")
def test_environment(app_environment):
    """Environment shared by the app under test and any worker subprocess it starts, with
    PostgreSQL (the test database created) and Redis answering (tests/fixtures/apps.py builds the app)."""
    _ensure_database(TEST_DATABASE_URL)
    _ensure_redis(TEST_REDIS_URL)
    return app_environment


def _empty_tables(connection, tables: list[str]) -> None:
    """Leave the tables (given referenced before referencing) as `TRUNCATE … RESTART IDENTITY` of
    them all would: no rows, and every sequence drawn from since its last restart back at its start.

    DELETE, not TRUNCATE: a TRUNCATE gives every table and index new files, which costs the same
    for an empty table as for a full one, 150 to 450 ms for all of them before each test, where
    deleting the few rows a test leaves takes a few milliseconds.
    """
    # Package delivery attempts are append-only; this session says it empties them on purpose
    # (migration 012dde93e6d7).
    connection.execute(text("SET LOCAL rhythm.purging_history = 'on'"))
    for table in reversed(tables):
        connection.execute(text(f"DELETE FROM {table}"))
    connection.execute(
        text(
            "SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false)"
            " FROM pg_sequences WHERE schemaname = current_schema() AND last_value IS NOT NULL"
        )
    )


@pytest.fixture(autouse=True)
def _clean_state(request):
    """Each test that uses the app starts with empty tables and an empty test Redis database."""
    if "app" in request.fixturenames:
        application = request.getfixturevalue("app")
        from app.extensions import db

        with application.app_context():
            db.session.remove()
            with db.engine.begin() as connection:
                _empty_tables(connection, [table.name for table in db.metadata.sorted_tables])
        Redis.from_url(TEST_REDIS_URL).flushdb()
    yield


@pytest.fixture
def app_context(app):
    with app.app_context():
        yield


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def csrf_app(app):
    """The same app with CSRF protection on, as in production."""
    app.config["WTF_CSRF_ENABLED"] = True
    yield app
    app.config["WTF_CSRF_ENABLED"] = False


class AuthActions:
    def __init__(self, client):
        self._client = client

    def login(self, email: str, password: str = "password"):
        return self._client.post("/login", data={"email": email, "password": password})

    def logout(self):
        return self._client.post("/logout")


@pytest.fixture
def auth(client):
    return AuthActions(client)
