"""The schedule engine on SQLite, the embedded default of `make run`: the ticker admits a due
occurrence, the run produces its file and writes each recipient's message to the outbox folder."""

from __future__ import annotations

from app.extensions import db
from app.models.schedule import DeliveryStatus, RunStatus, ScheduleRun
from app.models.types import utcnow
from app.services.schedules import schedule_runs, schedule_ticker
from tests import factories


def test_a_due_schedule_runs_and_mails_on_sqlite(sqlite_app, test_environment):
    application = sqlite_app()
    outbox = application.config["SETTINGS"].mail.outbox
    mailed_before = set(outbox.glob("*.eml")) if outbox.exists() else set()
    with application.app_context():
        db.create_all()
        workspace = factories.make_workspace()
        owner = factories.make_member(workspace, role="admin").person
        factories.make_timesheet_entry(factories.make_team_member(factories.make_team(workspace)), note="=1+1")
        query = factories.make_query(workspace, owner)
        last_hour = utcnow().replace(minute=0, second=0, microsecond=0)
        factories.make_schedule(
            query, owner, timetable={"kind": "hourly", "minute": 0, "zone": "UTC"}, next_occurrence_at=last_hour
        )

        assert schedule_ticker.tick() == 1  # admits and claims the dispatch, as the scheduler loop does
        run = db.session.query(ScheduleRun).one()
        assert schedule_runs.process_run(run.id) == "succeeded"

        db.session.expire_all()
        run = db.session.get(ScheduleRun, run.id)
        assert run.status == RunStatus.SUCCEEDED and run.row_count == 1
        assert [delivery.status for delivery in run.deliveries] == [DeliveryStatus.SUBMITTED]
        assert len(set(outbox.glob("*.eml")) - mailed_before) == 1
        db.session.remove()
