"""The RQ job that processes one schedule run: load the app, call the service (timed and counted)."""

from __future__ import annotations

from app.observability.metrics import observed_job
from app.services.schedules.schedule_runs import process_run
from jobs.app_context import worker_app


@observed_job("schedule_run")
def run(run_id: int) -> str:
    with worker_app().app_context():
        return process_run(run_id)
