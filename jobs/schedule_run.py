"""The RQ job that processes one schedule run: load the app, call the service."""

from __future__ import annotations

from app.services.schedule_runs import process_run
from jobs.app_context import worker_app


def run(run_id: int) -> str:
    with worker_app().app_context():
        return process_run(run_id)
