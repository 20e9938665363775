"""The RQ job that produces one export file: load the app, call the service."""

from __future__ import annotations

from app.services.export_runner import run_export_file
from jobs.app_context import worker_app


def run(export_id: int) -> str:
    with worker_app().app_context():
        return run_export_file(export_id)
