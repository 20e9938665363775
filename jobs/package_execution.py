"""The RQ job that produces one workspace-export package: load the app, call the service."""

from __future__ import annotations

from app.services.package_production import run_execution
from jobs.app_context import worker_app


def run(execution_id: int) -> str:
    with worker_app().app_context():
        return run_execution(execution_id)
