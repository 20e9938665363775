"""A schedule run's copies to destinations on real rq worker processes and a real SFTP server:
delivered by a worker once the run makes them; a worker SIGKILLed mid-copy (the whole file written
under its temporary name, not yet renamed) leaves nothing under the file's name, and the
redelivered attempt puts one whole file there; Run now pressed twice makes one copy."""

from __future__ import annotations

from datetime import timedelta

from rq.job import Job
from sqlalchemy import select

from app.destinations.sftp import PARTIAL_MARK
from app.domain.people.access import current_context
from app.extensions import db
from app.models import ExportFile
from app.models.schedule import ScheduleDestination, ScheduleRun
from app.models.schedule_destination_delivery import DestinationDelivery, DestinationDeliveryAttempt
from app.models.types import utcnow
from app.services.schedules import schedules
from app.services.schedules.destination_work import DESTINATION_DELIVERIES
from app.services.schedules.schedule_runs import process_run
from app.services.work.claims import dispatch_pending
from app.services.work.engine import redeliver_lapsed
from app.services.work.queue import redis_connection
from app.services.work.work_kind import LOST_AFTER
from app.storage import get_storage
from tests.fixtures.workers import wait_for

SHORT_LEASE_SECONDS = 2


def _row(delivery_id: int) -> DestinationDelivery:
    db.session.rollback()
    return db.session.get_one(DestinationDelivery, delivery_id, populate_existing=True)


def _sftp_schedule(run_scenario, sftp_destination):
    schedule = run_scenario.make_schedule(recipients=())
    destination = sftp_destination(run_scenario.workspace, path="inbound/rhythm")
    schedule.destinations.append(ScheduleDestination(destination_id=destination.id))
    db.session.commit()
    return schedule


def _run_and_its_delivery(run_scenario, schedule) -> tuple[ScheduleRun, DestinationDelivery, bytes]:
    run = run_scenario.admit(schedule)
    assert process_run(run.id) == "succeeded"
    run = db.session.get_one(ScheduleRun, run.id, populate_existing=True)
    export = db.session.get_one(ExportFile, run.export_id)
    delivery = db.session.scalars(select(DestinationDelivery).where(DestinationDelivery.run_id == run.id)).one()
    return run, delivery, b"".join(get_storage().read_chunks(export.storage_key))


def test_a_worker_copies_the_run_s_file_to_the_sftp_server_whole_by_one_rename(
    run_scenario, sftp_server, sftp_destination, start_worker
):
    schedule = _sftp_schedule(run_scenario, sftp_destination)
    _, delivery, data = _run_and_its_delivery(run_scenario, schedule)  # dispatched as the run made it
    worker = start_worker()

    wait_for(lambda: _row(delivery.id).status == "delivered", timeout=60, what="the copy")
    job = Job.fetch(_row(delivery.id).job_id, connection=redis_connection())
    worker.stop()

    target = f"inbound/rhythm/{delivery.target_key}"
    assert sftp_server.files() == {target: data}
    [(temporary, renamed_to)] = sftp_server.renames
    assert renamed_to == target and PARTIAL_MARK in temporary
    assert _row(delivery.id).location == f"sftp://{sftp_server.user}@127.0.0.1:{sftp_server.port}/{target}"
    # The job carries the delivery's id, and nothing the worker logged names the login's password.
    assert job.args == (delivery.id,)
    assert f"schedule destination delivery {delivery.id}" in worker.output()
    assert sftp_server.password not in worker.output()


def test_a_worker_killed_mid_copy_leaves_no_file_under_its_name_and_the_redelivery_puts_one_whole_file(
    run_scenario, sftp_server, sftp_destination, start_worker
):
    schedule = _sftp_schedule(run_scenario, sftp_destination)
    sftp_server.hold_renames()
    _, delivery, data = _run_and_its_delivery(run_scenario, schedule)
    first = start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    assert sftp_server.rename_waiting.wait(timeout=60), "the worker never reached the rename"
    first.kill()
    target = f"inbound/rhythm/{delivery.target_key}"
    assert target not in sftp_server.files()
    sftp_server.release_renames()

    wait_for(lambda: _row(delivery.id).lease_expires_at < utcnow(), timeout=30, what="the dead holder's lease")
    assert redeliver_lapsed(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 1
    failed = _row(delivery.id)
    assert (failed.status, failed.failure_class, failed.failure_code) == ("failed", "transient", "worker_stopped")
    failed.next_attempt_at = utcnow() - timedelta(seconds=1)  # the retry's minute has passed
    db.session.commit()
    assert dispatch_pending(DESTINATION_DELIVERIES) == 1
    start_worker(LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lambda: _row(delivery.id).status == "delivered", timeout=60, what="the redelivered copy")

    whole = {name: content for name, content in sftp_server.files().items() if PARTIAL_MARK not in name}
    assert whole == {target: data}
    outcomes = db.session.execute(
        select(DestinationDeliveryAttempt.number, DestinationDeliveryAttempt.outcome)
        .where(DestinationDeliveryAttempt.delivery_id == delivery.id)
        .order_by(DestinationDeliveryAttempt.number)
    ).all()
    assert outcomes == [(1, "failed"), (2, "delivered")]


def test_run_now_pressed_twice_makes_one_run_and_one_copy(run_scenario, sftp_server, sftp_destination, start_worker):
    schedule = _sftp_schedule(run_scenario, sftp_destination)
    owner = current_context(run_scenario.workspace.id, run_scenario.owner.id)
    first = schedules.run_now(owner, schedule, "same-press")
    second = schedules.run_now(owner, schedule, "same-press")
    assert first.admitted and not second.admitted and first.run.id == second.run.id

    assert process_run(first.run.id) == "succeeded"
    assert process_run(first.run.id) == "already_settled"
    start_worker()
    delivery = db.session.scalars(select(DestinationDelivery)).one()
    wait_for(lambda: _row(delivery.id).status == "delivered", timeout=60, what="the copy")

    assert len(sftp_server.renames) == 1
    assert list(sftp_server.files()) == [f"inbound/rhythm/{delivery.target_key}"]
