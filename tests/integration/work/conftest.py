"""The module's workers and surroundings for test_engine_with_real_workers.py (pool.py).

This process's settings point at the same storage, destinations and lease length while the module
runs, so that the records it makes and the engine turns it runs see what the workers see.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator

import pytest

from tests.fixtures.smtp import running_smtp_server
from tests.integration.work.pool import LEASE_SECONDS, POOL_SIZE, Outside, WorkerPool


@pytest.fixture(scope="module")
def _module_workers(app, tmp_path_factory) -> Iterator[tuple[Outside, WorkerPool]]:
    folder = tmp_path_factory.mktemp("engine")
    storage, destinations = folder / "storage", folder / "destinations"
    storage.mkdir()
    destinations.mkdir()
    settings = app.config["SETTINGS"]
    with running_smtp_server() as smtp:
        app.config["SETTINGS"] = dataclasses.replace(
            settings,
            storage_url=storage.as_uri(),
            destinations_root=str(destinations),
            lease_seconds=LEASE_SECONDS,
        )
        environment = {
            **os.environ,
            "STORAGE_URL": storage.as_uri(),
            "DESTINATIONS_ROOT": str(destinations),
            "MAIL_URL": f"smtp://{smtp.host}:{smtp.port}",
            "LEASE_SECONDS": str(LEASE_SECONDS),
        }
        pool = WorkerPool(environment, folder)
        for _ in range(POOL_SIZE):
            pool.start()
        try:
            yield Outside(storage, destinations, smtp), pool
        finally:
            pool.stop_all()
            app.config["SETTINGS"] = settings


@pytest.fixture
def outside(_module_workers, app_context) -> Outside:
    """The module's storage, destinations and SMTP server, emptied for this test."""
    found, _ = _module_workers
    found.empty()
    return found


@pytest.fixture
def workers(_module_workers, outside) -> Iterator[WorkerPool]:
    """The module's workers, every one running and thawed; their logs of this test shown after it."""
    _, pool = _module_workers
    pool.ready_for_a_test()
    yield pool
    pool.show_logs()
