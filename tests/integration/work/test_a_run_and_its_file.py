"""A schedule run and the file it produces are two kinds of work with one holder at a time: when
the run's worker died, the file's own redelivery and the run's next attempt meet on the file, and
neither supersedes the other while its holder is alive."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from app.domain.errors import TransitionRefused
from app.domain.files import export_file
from app.extensions import db
from app.models import ExportFile
from app.models.schedule import ScheduleRun
from app.models.types import utcnow
from app.services.files import export_runner
from app.services.files.export_runner import HELD_ELSEWHERE, run_export_file
from app.services.schedules import run_file_production, schedule_runs
from tests.integration.work.drivers import FILES, RUNS


class _WorkerDied(BaseException):
    """The worker's process ended here (a BaseException, as a kill is: nothing handles it)."""


def test_a_second_job_for_a_file_whose_holder_is_alive_leaves_it_to_that_holder(app_context):
    export_id = FILES.make_ready()
    attempt = export_file.start(export_id, holder="live-worker", lease_expires_at=utcnow() + timedelta(minutes=1))

    assert run_export_file(export_id) == HELD_ELSEWHERE

    held = db.session.get_one(ExportFile, export_id, populate_existing=True)
    assert (held.status, held.attempt_count, held.lease_holder) == ("running", attempt, "live-worker")
    with pytest.raises(TransitionRefused):
        export_file.start(export_id, holder="another", lease_expires_at=utcnow() + timedelta(minutes=1))


def test_a_run_s_next_attempt_waits_for_its_file_s_holder_then_produces_the_file_itself(app_context, monkeypatch):
    run_id = RUNS.make_ready()

    def dies_mid_file(export_id: int) -> str:
        # The file's holder renewed its lease a moment ago: it lapses in two seconds.
        export_file.start(export_id, holder="dead-worker", lease_expires_at=utcnow() + timedelta(seconds=2))
        raise _WorkerDied

    with monkeypatch.context() as patched, pytest.raises(_WorkerDied):
        patched.setattr(run_file_production, "run_export_file", dies_mid_file)
        schedule_runs.process_run(run_id)
    db.session.execute(update(ScheduleRun).where(ScheduleRun.id == run_id).values(lease_expires_at=utcnow()))
    db.session.commit()
    answers: list[str] = []

    def recorded(export_id: int) -> str:
        answers.append(export_runner.run_export_file(export_id))
        return answers[-1]

    monkeypatch.setattr(run_file_production, "run_export_file", recorded)

    assert schedule_runs.process_run(run_id) == "succeeded"

    run = RUNS.row(run_id)
    file = db.session.get_one(ExportFile, run.export_id, populate_existing=True)
    assert answers == [HELD_ELSEWHERE, "succeeded"]
    assert (file.status, file.attempt_count) == ("succeeded", 2)
    assert [(a.number, a.outcome) for a in run.attempts] == [(1, "failed"), (2, "succeeded")]
