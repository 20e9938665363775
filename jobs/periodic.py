"""The periodic tasks the scheduler runs, each on its own interval: one task per concern, never
one per kind of background record (the work engine's turns loop over the kinds).

Every task is idempotent and safe to run on several machines at once: the conditional claims in
the database decide who does what, not the timer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from flask import Flask

from app.models.types import database_clock
from app.observability.metrics import count_periodic_actions
from app.services.files.sweeps import sweep_expired_files
from app.services.schedules.schedule_ticker import tick
from app.services.work import engine
from app.services.workspace_export.export_cadence import admit_due_cadences
from app.services.workspace_export.package_retention import sweep_expired_packages

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PeriodicTask:
    """`run(now)` handles what is due by `now` and returns how many records it handled."""

    name: str
    every_seconds: float
    run: Callable[[datetime], int]


PERIODIC_TASKS = (
    # The work engine, over every kind of background record (app/services/work/).
    PeriodicTask("dispatch pending work", 2, engine.dispatch_pending),
    PeriodicTask("dispatch lost jobs again", 15, engine.redispatch_lost),
    # Often, so a record whose worker died waits at most a lease period and one turn (≈35 s by default).
    PeriodicTask("redeliver lapsed leases", 5, engine.redeliver_lapsed),
    PeriodicTask("admit due schedule occurrences", 60, tick),
    PeriodicTask("admit due workspace export cadences", 60, admit_due_cadences),
    PeriodicTask("sweep expired files", 600, sweep_expired_files),
    PeriodicTask("sweep expired workspace export packages", 600, sweep_expired_packages),
)


def run_task(app: Flask, task: PeriodicTask) -> int | None:
    """Run one task in a fresh app context; a failure is logged and the loop goes on."""
    try:
        with app.app_context():
            count = task.run(database_clock())
    except Exception:  # one task's failure (Redis down, storage unreachable…) must not stop the others
        log.exception("periodic task %r failed; it runs again at its next turn", task.name)
        return None
    if count:
        log.info("periodic task %r handled %s", task.name, count)
        count_periodic_actions(task.name, count)
    return count
