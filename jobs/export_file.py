"""The RQ job that produces one export file: load the app, call the service (timed and counted by kind and outcome)."""

from __future__ import annotations

from app.observability.metrics import observed_job
from app.services.files.export_runner import run_export_file
from jobs.app_context import worker_app


@observed_job("export_file")
def run(export_id: int) -> str:
    with worker_app().app_context():
        return run_export_file(export_id)
