"""The RQ job that produces one workspace-export package: load the app, call the service (timed and counted)."""

from __future__ import annotations

from app.observability.metrics import observed_job
from app.services.workspace_export.package_production import run_execution
from jobs.app_context import worker_app


@observed_job("package_execution")
def run(execution_id: int) -> str:
    with worker_app().app_context():
        return run_execution(execution_id)
