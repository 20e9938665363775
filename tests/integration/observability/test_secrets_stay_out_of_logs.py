"""No secret ever reaches a log: real work runs with every secret configured (a file into S3, a
schedule's email through SMTP AUTH, sign-ins, a workspace export delivered to a customer bucket),
and every line the web process, the worker and the scheduler wrote is searched for each of them."""

from __future__ import annotations

from datetime import timedelta

from app.extensions import db
from app.models import ExportDelivery, ExportExecution
from app.models.schedule import RunTrigger
from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.schedules.run_work import RUNS
from app.services.schedules.schedule_admission import admit_run
from app.services.work.claims import dispatch_pending
from app.services.workspace_export.execution_admission import admit
from tests import factories
from tests.fixtures.workers import file_row, wait_for

SECRETS = {
    "SECRET_KEY": "sk-Z3cr3t-session-signing-4471",
    "CREDENTIALS_KEY": "ck-Z3cr3t-credentials-9012",
    "MAIL_PASSWORD": "mp-Z3cr3t-smtp-password-5510",
    "AWS_SECRET_ACCESS_KEY": "aws-Z3cr3t-storage-key-7733",
}
SIGN_IN_PASSWORD = "pw-Z3cr3t-typed-at-sign-in-2290"


def test_files_mail_and_sign_ins_log_no_secret(
    client, export_scenario, storage_on_s3, smtp_server, start_worker, start_scheduler, json_log
):
    _, bucket = storage_on_s3
    smtp_server.require_login("exports", SECRETS["MAIL_PASSWORD"])
    environment = {
        **SECRETS,
        "MAIL_URL": f"smtp://{smtp_server.host}:{smtp_server.port}",
        "MAIL_USERNAME": "exports",
    }
    worker = start_worker(**environment)
    scheduler = start_scheduler(**environment)

    client.post("/login", data={"email": export_scenario.requester.email, "password": SIGN_IN_PASSWORD})
    export_scenario.add_timesheet_rows(10)
    export = export_scenario.request_file("xlsx")
    assert dispatch_pending(FILES) == 1
    schedule = factories.make_schedule(export_scenario.query, export_scenario.requester)
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=schedule.workspace_id,
        occurrence_at=utcnow() - timedelta(minutes=1),
        trigger=RunTrigger.MANUAL,
    )
    assert dispatch_pending(RUNS) == 1
    wait_for(lambda: file_row(export.id).status == "succeeded", timeout=60, what="the file")
    wait_for(lambda: len(smtp_server.messages) == 1, timeout=60, what="the schedule's email (sent with SMTP AUTH)")
    worker.stop()
    scheduler.stop()

    logs = {"web": json_log.getvalue(), "worker": worker.output(), "scheduler": scheduler.output()}
    assert f"export_file {export.id}" in logs["worker"] and f"schedule_run {run.id}" in logs["worker"]
    assert "sign-in failed" in logs["web"]
    for process, text in logs.items():
        for name, secret in {**SECRETS, "the typed password": SIGN_IN_PASSWORD}.items():
            assert secret not in text, f"{name} appears in the {process} log"


def test_a_workspace_export_delivered_to_a_bucket_logs_no_destination_secret(
    world, s3_account, s3_destination, start_worker, json_log, test_environment
):
    factories.make_export_settings(world.workspace, datasets=["teams", "people"])
    s3_destination(world.workspace)
    worker = start_worker()
    execution = admit(world.workspace.id, world.admin, "manual")

    def settled() -> bool:
        db.session.rollback()
        return db.session.get(ExportExecution, execution.id).status in ("succeeded", "failed")

    wait_for(settled, timeout=90, what="the workspace export")
    delivery = db.session.query(ExportDelivery).one()
    assert delivery.status == "delivered", delivery.failure_summary
    worker.stop()

    logs = {"web": json_log.getvalue(), "worker": worker.output()}
    assert f"package_execution {execution.id}" in logs["worker"]
    for process, text in logs.items():
        for name, secret in (
            ("the destination's secret", s3_account.secret),
            ("CREDENTIALS_KEY", test_environment["CREDENTIALS_KEY"]),
        ):
            assert secret not in text, f"{name} appears in the {process} log"
