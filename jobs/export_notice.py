"""The RQ job that makes one attempt at sending an export notice: load the app, call the service (timed and counted)."""

from __future__ import annotations

from app.observability.metrics import observed_job
from app.services.workspace_export.export_notices import send
from jobs.app_context import worker_app


@observed_job("export_notice")
def run(notice_id: int) -> str:
    with worker_app().app_context():
        return send(notice_id)
