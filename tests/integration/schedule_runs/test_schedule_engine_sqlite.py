"""The schedule engine on SQLite, the embedded default of `make run`: the ticker admits a due
occurrence, the run produces its file and writes each recipient's message to the outbox folder,
or copies its file to a chosen folder once."""

from __future__ import annotations

from app.extensions import db
from app.models import ExportFile
from app.models.schedule import DeliveryStatus, RunStatus, RunTrigger, ScheduleDestination, ScheduleRun
from app.models.types import utcnow
from app.services.schedules import destination_deliveries, schedule_runs, schedule_ticker
from app.services.schedules.schedule_admission import admit_run
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


def test_a_run_delivers_to_a_chosen_folder_once_on_sqlite(sqlite_app, test_environment, tmp_path):
    root = tmp_path / "destinations"
    root.mkdir()
    application = sqlite_app(destinations_root=str(root))
    with application.app_context():
        db.create_all()
        workspace = factories.make_workspace()
        owner = factories.make_member(workspace, role="admin").person
        factories.make_timesheet_entry(factories.make_team_member(factories.make_team(workspace)))
        schedule = factories.make_schedule(factories.make_query(workspace, owner), owner, name="Hours")
        schedule.recipients = []
        folder = factories.make_destination(workspace, path="exports")
        schedule.destinations.append(ScheduleDestination(destination_id=folder.id))
        db.session.commit()
        run = admit_run(
            schedule_id=schedule.id, workspace_id=workspace.id, occurrence_at=utcnow(), trigger=RunTrigger.MANUAL
        )

        assert schedule_runs.process_run(run.id) == "succeeded"
        run = db.session.get_one(ScheduleRun, run.id, populate_existing=True)
        export = db.session.get_one(ExportFile, run.export_id)
        assert destination_deliveries.create_deliveries(run, schedule, export) == []  # made and dispatched once
        [delivery] = run.destination_deliveries
        assert destination_deliveries.run_delivery(delivery.id) == "delivered"

        db.session.expire_all()
        assert [d.status for d in db.session.get_one(ScheduleRun, run.id).destination_deliveries] == ["delivered"]
        assert [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()] == [
            f"exports/{delivery.target_key}"
        ]
        db.session.remove()
