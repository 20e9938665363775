"""The periodic tasks the scheduler runs, each on its own interval.

Every task is idempotent and safe to run on several machines at once: the conditional claims in
the database decide who does what, not the timer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask

from app.models.types import utcnow
from app.observability.metrics import count_periodic_actions
from app.services import execution_dispatch, export_notices, package_delivery, schedule_runs
from app.services.execution_watchdog import redeliver_abandoned_executions
from app.services.export_cadence import admit_due_cadences
from app.services.outbox import dispatch_pending, redispatch_lost
from app.services.package_retention import sweep_expired_packages
from app.services.schedule_ticker import tick
from app.services.sweeps import sweep_expired_files
from app.services.watchdog import redeliver_stalled

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PeriodicTask:
    name: str
    every_seconds: float
    run: Callable[[], int]


PERIODIC_TASKS = (
    PeriodicTask("dispatch the outbox", 2, dispatch_pending),
    PeriodicTask("dispatch lost jobs again", 15, lambda: redispatch_lost(utcnow())),
    # Often, so a file whose worker died waits at most a lease period and one turn (≈35 s by default).
    PeriodicTask("redeliver stalled files", 5, lambda: redeliver_stalled(utcnow())),
    PeriodicTask("sweep expired files", 600, lambda: sweep_expired_files(utcnow())),
    PeriodicTask("admit due schedule occurrences", 60, lambda: tick(utcnow())),
    # Runs admitted by "Run now", and runs whose retry delay has passed.
    PeriodicTask("dispatch queued schedule runs", 2, lambda: schedule_runs.dispatch_queued(utcnow())),
    PeriodicTask("dispatch lost schedule runs again", 15, lambda: schedule_runs.redispatch_lost(utcnow())),
    PeriodicTask("redeliver stalled schedule runs", 5, lambda: schedule_runs.redeliver_stalled(utcnow())),
    # Workspace exports whose admission could not enqueue them, and those whose job Redis lost.
    PeriodicTask("dispatch queued workspace exports", 5, execution_dispatch.dispatch_queued),
    PeriodicTask("dispatch lost workspace exports again", 15, lambda: execution_dispatch.redispatch_lost(utcnow())),
    PeriodicTask("admit due workspace export cadences", 60, lambda: admit_due_cadences(utcnow())),
    PeriodicTask("sweep expired workspace export packages", 600, lambda: sweep_expired_packages(utcnow())),
    # Package deliveries whose retry time has come; attempts whose worker died become transient failures.
    PeriodicTask("dispatch due package deliveries", 5, lambda: package_delivery.dispatch_due(utcnow())),
    PeriodicTask(
        "settle package deliveries whose worker stopped", 15, lambda: package_delivery.settle_lapsed(utcnow())
    ),
    # Export notices the mail server could not take at the time.
    PeriodicTask("send pending export notices", 30, lambda: export_notices.send_pending(utcnow())),
    # A workspace export whose worker died is dispatched again (given up after its last attempt).
    PeriodicTask("redeliver abandoned workspace exports", 5, lambda: redeliver_abandoned_executions(utcnow())),
)


def run_task(app: Flask, task: PeriodicTask) -> int | None:
    """Run one task in a fresh app context; a failure is logged and the loop goes on."""
    try:
        with app.app_context():
            count = task.run()
    except Exception:  # one task's failure (Redis down, storage unreachable…) must not stop the others
        log.exception("periodic task %r failed; it runs again at its next turn", task.name)
        return None
    if count:
        log.info("periodic task %r handled %s", task.name, count)
        count_periodic_actions(task.name, count)
    return count
