"""The RQ job that makes one attempt at a schedule run's delivery to a destination: load the app,
call the service (timed and counted)."""

from __future__ import annotations

from app.observability.metrics import observed_job
from app.services.schedules.destination_deliveries import run_delivery
from jobs.app_context import worker_app


@observed_job("schedule_destination")
def run(delivery_id: int) -> str:
    with worker_app().app_context():
        return run_delivery(delivery_id)
