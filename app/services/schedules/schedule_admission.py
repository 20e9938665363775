"""Admitting a schedule's runs: one row per (schedule, occurrence time), whoever asks first.

The unique index `schedule_runs_occurrence_uidx` decides (INV-05): any number of tickers on any
number of machines, and a person pressing "Run now", can ask for the same occurrence at once and
exactly one run exists afterwards. A refused insert is not an error: the occurrence is admitted.
A run started by hand is refused the same way while another of the schedule's manual runs is
queued or running (`schedule_runs_one_active_manual_uidx`), or when its form's key admitted one
already (`schedule_runs_request_token_uidx`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.models.schedule import RunTrigger, ScheduleRun


def admit_run(
    *,
    schedule_id: int,
    workspace_id: int,
    occurrence_at: datetime,
    trigger: RunTrigger,
    skipped_occurrences: Sequence[datetime] = (),
    request_token: str | None = None,
) -> ScheduleRun | None:
    """Insert and commit the queued run for this occurrence; None when a unique index refused it."""
    run = ScheduleRun(
        request_token=request_token,
        schedule_id=schedule_id,
        workspace_id=workspace_id,
        occurrence_at=occurrence_at,
        trigger=trigger,
        skipped_occurrences=[moment.isoformat() for moment in skipped_occurrences],
    )
    db.session.add(run)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return None
    return run
