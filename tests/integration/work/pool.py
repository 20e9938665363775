"""Real workers shared by the engine's tests (test_engine_with_real_workers.py), and what their
work leaves outside the database.

A worker takes seconds to start on a loaded machine, so the module keeps a pool of them running
with short leases, beside one storage folder, one destinations folder and one SMTP server of its
own (conftest.py); each test starts with them emptied and every worker thawed, and a worker a test
killed is replaced at once.
"""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.fixtures.smtp import SmtpTestServer
from tests.fixtures.workers import WORKER_COMMAND, BackgroundProcess, worker_name

# Short, so a dead holder's lease lapses quickly; long enough that a renewal every sixth of it
# is never missed for five turns in a row on a loaded machine.
LEASE_SECONDS = 3
# Two workers: one held (or killed, or frozen) inside a job, the other free to take the work over.
POOL_SIZE = 2


@dataclass
class Outside:
    """What background work leaves outside the database: objects in the product's storage, files
    at directory destinations, messages at the SMTP server."""

    storage: Path
    destinations: Path
    smtp: SmtpTestServer

    def stored(self) -> set[str]:
        """Every file in the storage folder, by key; an unfinished upload shows under its staging folder."""
        return _files_under(self.storage)

    def delivered(self) -> set[str]:
        """Every file under the destinations folder, by path relative to it."""
        return _files_under(self.destinations)

    def recipients(self) -> Counter[str]:
        """How many messages each address received."""
        return Counter(address for message in self.smtp.messages for address in message.recipients)

    def fingerprint(self) -> tuple[dict[str, tuple[int, int, int]], dict[str, tuple[int, int, int]], int]:
        """Each stored and delivered file's inode, size and modification time, and the number of
        messages: a file written again, even with the same name and bytes, changes it."""
        return _identities(self.storage), _identities(self.destinations), len(self.smtp.messages)

    def empty(self) -> None:
        for folder in (self.storage, self.destinations):
            shutil.rmtree(folder)
            folder.mkdir()
        self.smtp.messages.clear()


def _files_under(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}


def _identities(folder: Path) -> dict[str, tuple[int, int, int]]:
    identities = {}
    for name in _files_under(folder):
        status = (folder / name).stat()
        identities[name] = (status.st_ino, status.st_size, status.st_mtime_ns)
    return identities


@dataclass
class WorkerPool:
    """`python -m jobs.worker` processes with this module's environment."""

    environment: dict[str, str]
    log_folder: Path
    workers: list[BackgroundProcess] = field(default_factory=list)
    _started: int = 0
    _log_offsets: dict[int, int] = field(default_factory=dict)

    def start(self) -> BackgroundProcess:
        self._started += 1
        worker = BackgroundProcess(WORKER_COMMAND, self.environment, self.log_folder / f"worker-{self._started}.log")
        self.workers.append(worker)
        return worker

    def holder(self, lease_holder: str | None) -> BackgroundProcess:
        """The worker of the pool that holds a lease."""
        for worker in self.workers:
            if lease_holder == worker_name(worker):
                return worker
        raise AssertionError(f"no worker of the pool is {lease_holder!r}")

    def replace(self, killed: BackgroundProcess) -> None:
        """Put a new worker in the place of a killed one; it starts while the test goes on."""
        self.workers.remove(killed)
        self._show(killed)
        self.start()

    def ready_for_a_test(self) -> None:
        for worker in list(self.workers):
            if worker.process.poll() is None:
                worker.thaw()
            else:
                self.replace(worker)
        self._log_offsets = {worker.pid: len(worker.output()) for worker in self.workers}

    def show_logs(self) -> None:
        """Print what each worker logged during the test (pytest shows it when the test failed)."""
        for worker in self.workers:
            worker.thaw()
            self._show(worker)

    def _show(self, worker: BackgroundProcess) -> None:
        print(f"--- worker pid {worker.pid} ---\n{worker.output()[self._log_offsets.get(worker.pid, 0) :]}")

    def stop_all(self) -> None:
        for worker in self.workers:
            worker.stop()
