"""Leases: how the watchdog tells a dead worker from a slow one, for any row a job works on.

The attempt that starts a row records itself as the row's holder (its RQ worker's name) with a
lease of LEASE_SECONDS, and a thread in the job's process renews the lease every sixth of that
for as long as the process lives, whatever the job's main thread is doing: a single slow step
(a long query, a lock wait, a big PDF chunk) keeps its lease, a killed worker loses it within
one lease period. The work engine then redelivers the row (`lease_lapsed` selects such rows;
`app.services.work.work_kind.dispatch_is_waiting` keeps it from redelivering a row whose new job has
not started yet).

The rule does not ask RQ whether the worker is registered: a SIGKILLed worker stays registered
until its key expires (about 90 s), longer than a lease, and emptying Redis would unregister
live workers. The database row decides, as everywhere else.

Every kind of background record uses it (app/services/work/): its model has `LeaseColumns`, it
renews through a guarded transition of its own and reuses these functions.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator

from flask import current_app
from rq import get_current_job

from app.domain.errors import TransitionRefused

# The SQL condition lives beside the lease columns, so that domain transitions can guard on it too.
from app.models.types import database_now
from app.models.types import lease_lapsed as lease_lapsed

log = logging.getLogger(__name__)

# Renewals per lease period: a holder must miss five renewals in a row to lose its lease.
RENEWALS_PER_LEASE = 6


def holder_name() -> str:
    """The RQ worker running this job, or this process when the work runs outside RQ."""
    job = get_current_job()
    if job is not None and job.worker_name:
        return job.worker_name
    return f"{socket.gethostname()}-{os.getpid()}"


def lease_seconds() -> int:
    return current_app.config["SETTINGS"].lease_seconds


def lease_expiry() -> database_now:
    """When a lease granted or renewed now lapses, on the database's clock: the statement that
    writes it reads the time, so the worker's own clock, however wrong, decides nothing."""
    return database_now(lease_seconds())


@contextlib.contextmanager
def renewed_while_running(renew: Callable[[database_now], None], what: str) -> Iterator[None]:
    """Call `renew(new_expiry)` every sixth of a lease period, from a thread, until the block ends.

    `renew` raises TransitionRefused once the lease is no longer this attempt's (the row settled
    or a newer attempt took it over); renewing then stops, and the work finds out for itself.
    Any other error (the database briefly unreachable) is logged and the next turn tries again.
    """
    # Flask types current_app as a Flask, though it is a LocalProxy whose object the thread needs.
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    interval = lease_seconds() / RENEWALS_PER_LEASE
    stopping = threading.Event()

    def keep_renewing() -> None:
        while not stopping.wait(interval):
            try:
                with app.app_context():
                    renew(lease_expiry())
            except TransitionRefused:
                log.info("%s: the lease is no longer this attempt's; renewing stops", what)
                return
            except Exception:  # the next turn retries; the lease is long enough to miss a few
                log.exception("%s: renewing the lease failed", what)

    renewer = threading.Thread(target=keep_renewing, name=f"lease renewal: {what}", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stopping.set()
        renewer.join()
