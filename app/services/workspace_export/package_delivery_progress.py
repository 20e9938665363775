"""The delivering phase's progress report: for each destination of a package just produced, the
bytes copied so far, recorded as `counts` events in the execution's event log.
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_destination import ExportDestination
from app.models.export_execution import ExecutionPhase
from app.models.export_package import ExportPackage
from app.models.package_delivery import ExportDelivery
from app.services.workspace_export import package_delivery
from app.services.workspace_export.production_attempt import ProductionAttempt

log = logging.getLogger(__name__)

# Least time between two progress events of one destination's copy (its end is always recorded).
DELIVERY_EVENT_SECONDS = 10.0


class DeliveryProgress:
    """The delivering phase's progress: for each destination, bytes of the package copied so far,
    in the event log (its end always, and on the way at most every DELIVERY_EVENT_SECONDS) and
    in the execution's heartbeat. It never raises: a copy is the delivery's own work, fenced by
    the delivery's attempt, and goes on even when this execution attempt was superseded."""

    def __init__(self, attempt: ProductionAttempt, package_id: int):
        self._attempt = attempt
        package = db.session.get_one(ExportPackage, package_id)
        checksums = package_delivery.stored_checksums_key(package)
        checksums_size = attempt.storage.size(checksums) if checksums else 0
        self._total = package.size_bytes + checksums_size + package.manifest_size
        self._last_event: dict[int, float] = {}
        self._stopped = False

    def __call__(self, delivery_id: int, copied: int) -> None:
        now = time.monotonic()
        last = self._last_event.setdefault(delivery_id, now)
        if self._stopped or (copied < self._total and now - last < DELIVERY_EVENT_SECONDS):
            return
        self._last_event[delivery_id] = now
        attempt = self._attempt
        try:
            destination_id, name = db.session.execute(
                select(ExportDestination.id, ExportDestination.name)
                .join(ExportDelivery, ExportDelivery.destination_id == ExportDestination.id)
                .where(ExportDelivery.id == delivery_id)
            ).one()
            export_execution.log_event(
                attempt.execution_id,
                attempt.number,
                "counts",
                f"Copied {copied:,} of {self._total:,} bytes ({100 * copied // max(self._total, 1)}%) to “{name}”.",
                phase=ExecutionPhase.DELIVERING,
                details={
                    "delivery_id": delivery_id,
                    "destination_id": destination_id,
                    "bytes_copied": copied,
                    "bytes_total": self._total,
                },
            )
        except TransitionRefused:
            self._stopped = True
            log.info(
                "workspace export %s attempt %s: no longer current; delivery progress stops being recorded",
                attempt.execution_id,
                attempt.number,
            )
        except Exception:  # progress is a report; the copy matters more
            db.session.rollback()
            log.exception(
                "workspace export %s: recording delivery %s's progress failed", attempt.execution_id, delivery_id
            )
