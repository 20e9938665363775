"""The module's workers and surroundings for test_engine_with_real_workers.py (pool.py).

This process's app has the workers' storage, destinations and lease length (`_module_workers` is a
configuring fixture: tests/fixtures/apps.py), so that the records it makes and the engine turns it
runs see what the workers see.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.fixtures.apps import configuring_fixture
from tests.fixtures.smtp import running_smtp_server
from tests.integration.work.pool import LEASE_SECONDS, POOL_SIZE, Outside, WorkerPool


def _shared_with_the_workers(module_workers: tuple[Outside, WorkerPool]) -> dict[str, str]:
    found, _ = module_workers
    return {
        "STORAGE_URL": found.storage.as_uri(),
        "DESTINATIONS_ROOT": str(found.destinations),
        "LEASE_SECONDS": str(LEASE_SECONDS),
    }


@configuring_fixture(_shared_with_the_workers, scope="module")
def _module_workers(session_apps, tmp_path_factory) -> Iterator[tuple[Outside, WorkerPool]]:
    folder = tmp_path_factory.mktemp("engine")
    storage, destinations = folder / "storage", folder / "destinations"
    storage.mkdir()
    destinations.mkdir()
    with running_smtp_server() as smtp:
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
