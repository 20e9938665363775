"""The periodic scheduler loop (`flask scheduler`): runs each task of jobs.periodic on its interval.

Several schedulers may run on several machines; every task is safe to run concurrently. SIGTERM
or SIGINT stops the loop after the task in progress.
"""

from __future__ import annotations

import logging
import signal
import threading
import time

from flask import current_app, has_app_context

from app.observability.logs import configure_logging
from jobs.app_context import worker_app
from jobs.periodic import PERIODIC_TASKS, run_task

log = logging.getLogger(__name__)

_TICK_SECONDS = 0.5


def run_forever() -> None:
    configure_logging("scheduler")
    # Flask types current_app as a Flask, though it is a LocalProxy whose object this takes.
    app = current_app._get_current_object() if has_app_context() else worker_app()  # type: ignore[attr-defined]
    stopping = threading.Event()

    def stop(signum, _frame) -> None:
        log.info("received %s; stopping after the task in progress", signal.Signals(signum).name)
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    next_run = {task.name: 0.0 for task in PERIODIC_TASKS}
    log.info("scheduler started: %s", ", ".join(f"{t.name} every {t.every_seconds:g}s" for t in PERIODIC_TASKS))
    while not stopping.is_set():
        for task in PERIODIC_TASKS:
            if stopping.is_set():
                break
            if time.monotonic() >= next_run[task.name]:
                run_task(app, task)
                next_run[task.name] = time.monotonic() + task.every_seconds
        stopping.wait(_TICK_SECONDS)
    log.info("scheduler stopped")
