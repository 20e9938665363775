"""Schedule runs on real rq worker processes: a run admitted like "Run now" is dispatched and
processed; a worker SIGKILLed mid-run is replaced, the run completes, and each recipient receives
exactly one message (run as each recipient too, with a destination given the owner's file once).

To hold the worker inside the run, the test takes an exclusive lock on the timesheet table: the
file's query waits for it, alive, until the worker is killed.
"""

from __future__ import annotations

from datetime import timedelta

from rq.job import Job
from sqlalchemy import select, text, update

from app.domain.people.access import current_context
from app.extensions import db
from app.models import ExportFile, Person, Team
from app.models.schedule import (
    RecipientDelivery,
    Schedule,
    ScheduleDestination,
    ScheduleRun,
    ScheduleRunAttempt,
    ScheduleRunFile,
)
from app.models.schedule_destination_delivery import DestinationDelivery
from app.models.types import utcnow
from app.services.schedules import schedules
from app.services.schedules.schedule_runs import process_run
from app.services.work.claims import dispatch_pending
from app.services.work.engine import redeliver_lapsed
from app.services.work.kinds import RUNS
from app.services.work.leases import lease_seconds
from app.services.work.queue import redis_connection
from app.services.work.work_kind import LOST_AFTER
from app.storage import get_storage
from tests import factories
from tests.fixtures.workers import a_query_waits_for_the_timesheet_lock, timesheet_locked, wait_for

SHORT_LEASE_SECONDS = 2


def run_row(run_id: int) -> ScheduleRun:
    db.session.rollback()
    return db.session.get(ScheduleRun, run_id, populate_existing=True)


def test_run_admitted_by_hand_is_dispatched_and_processed_by_a_worker(run_scenario, smtp_server, start_worker):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)

    assert dispatch_pending(RUNS) == 1
    start_worker(MAIL_URL=f"smtp://{smtp_server.host}:{smtp_server.port}")

    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=60, what="the run to succeed")
    assert [m.recipients for m in smtp_server.messages] == [[run_scenario.colleague.email]]


def test_run_whose_worker_was_killed_completes_and_each_recipient_gets_one_message(
    run_scenario, smtp_server, start_worker
):
    mail_url = f"smtp://{smtp_server.host}:{smtp_server.port}"
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner", "someone@example.org"))
    run = run_scenario.admit(schedule)
    assert dispatch_pending(RUNS) == 1
    with timesheet_locked():
        first = start_worker(MAIL_URL=mail_url, LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the worker to wait inside the run's query")
        first.kill()
    start_worker(MAIL_URL=mail_url, LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    # A new attempt starts only once the killed holder's lease has lapsed.
    wait_for(lambda: run_row(run.id).lease_expires_at < utcnow(), timeout=30, what="the killed holder's lease to lapse")

    # The watchdog's judgement once the killed holder's lease has lapsed: the run, and the file the
    # killed attempt was producing for it, are each delivered again (their attempts are fenced).
    assert redeliver_lapsed(utcnow() + LOST_AFTER + timedelta(seconds=lease_seconds() + 1)) == 2

    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=60, what="the run to succeed after the kill")
    settled = run_row(run.id)
    assert [(a.outcome, a.error_code) for a in settled.attempts] == [("failed", "worker_stopped"), ("succeeded", None)]
    received = sorted(address for m in smtp_server.messages for address in m.recipients)
    assert received == sorted([run_scenario.colleague.email, run_scenario.owner.email, "someone@example.org"])


def test_a_run_as_each_recipient_whose_worker_was_killed_makes_each_file_once_and_mails_each_person_once(
    run_scenario, smtp_server, start_worker
):
    mail_url = f"smtp://{smtp_server.host}:{smtp_server.port}"
    night = db.session.scalars(select(Team.id).where(Team.workspace_id == run_scenario.workspace.id)).one()
    run_scenario.colleague_membership.team_scope = [night]
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner"), run_as_recipients=True)
    run = run_scenario.admit(schedule)
    assert dispatch_pending(RUNS) == 1
    with timesheet_locked():
        first = start_worker(MAIL_URL=mail_url, LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the worker to wait inside a file's query")
        first.kill()
    start_worker(MAIL_URL=mail_url, LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lambda: run_row(run.id).lease_expires_at < utcnow(), timeout=30, what="the killed holder's lease to lapse")
    redeliver_lapsed(utcnow() + LOST_AFTER + timedelta(seconds=lease_seconds() + 1))

    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=60, what="the run to succeed after the kill")
    files = db.session.scalars(select(ScheduleRunFile).where(ScheduleRunFile.run_id == run.id)).all()
    assert len(files) == 2 and all(f.decision == "send" for f in files)
    made = db.session.scalars(select(ExportFile.id).where(ExportFile.schedule_id == schedule.id)).all()
    assert sorted(made) == sorted(f.export_id for f in files)
    received = sorted(address for m in smtp_server.messages for address in m.recipients)
    assert received == sorted([run_scenario.colleague.email, run_scenario.owner.email])


def test_a_run_as_each_recipient_with_a_destination_killed_mid_run_and_pressed_twice_does_each_thing_once(
    run_scenario, smtp_server, start_worker, hold_lock, destinations_root
):
    """Killed while making a person's file, after the owner's file was made and its copy dispatched:
    the owner's file is made once, one file per access, one copy at the destination, each person
    mailed once; Run now pressed again meanwhile lands on the same run."""
    mail_url = f"smtp://{smtp_server.host}:{smtp_server.port}"
    night = db.session.scalars(select(Team.id).where(Team.workspace_id == run_scenario.workspace.id)).one()
    run_scenario.colleague_membership.team_scope = [night]
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner"), run_as_recipients=True)
    folder = factories.make_destination(run_scenario.workspace, path="inbound")
    schedule.destinations.append(ScheduleDestination(destination_id=folder.id))
    db.session.commit()
    owner = current_context(run_scenario.workspace.id, run_scenario.owner.id)
    run = schedules.run_now(owner, schedule, "first-press").run
    assert dispatch_pending(RUNS) == 1

    # The worker makes the owner's file and dispatches its copy, then waits to record a person's file.
    run_files = hold_lock(f"LOCK TABLE {ScheduleRunFile.__tablename__} IN ACCESS EXCLUSIVE MODE")
    first = start_worker(MAIL_URL=mail_url, LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lambda: run_files.waiters() > 0, timeout=60, what="the worker to reach the people's files")
    with timesheet_locked():
        run_files.release()
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the worker to wait inside a person's file")
        first.kill()
    again = schedules.run_now(owner, schedule, "second-press")
    assert (again.admitted, again.run.id) == (False, run.id)
    wait_for(lambda: run_row(run.id).lease_expires_at < utcnow(), timeout=30, what="the killed holder's lease to lapse")
    # The run, and the person's file the killed attempt was making, are each delivered again. The
    # next worker starts after this judgement, whose clock is ahead: a copy it had under way would
    # look lapsed to it.
    assert redeliver_lapsed(utcnow() + LOST_AFTER + timedelta(seconds=lease_seconds() + 1)) == 2
    start_worker(MAIL_URL=mail_url, LEASE_SECONDS=str(SHORT_LEASE_SECONDS))

    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=60, what="the run to succeed after the kill")
    [delivery] = wait_for(
        lambda: db.session.scalars(
            select(DestinationDelivery).where(
                DestinationDelivery.run_id == run.id, DestinationDelivery.status == "delivered"
            )
        ).all(),
        timeout=60,
        what="the copy to the destination",
    )
    settled = run_row(run.id)
    files = db.session.scalars(select(ScheduleRunFile).where(ScheduleRunFile.run_id == run.id)).all()
    made = db.session.scalars(select(ExportFile.id).where(ExportFile.schedule_id == schedule.id)).all()
    assert len(files) == 2 and all(f.decision == "send" for f in files)
    assert sorted(made) == sorted([settled.export_id, *(f.export_id for f in files)])
    assert [(a.outcome, a.error_code) for a in settled.attempts] == [("failed", "worker_stopped"), ("succeeded", None)]
    owners_file = db.session.get_one(ExportFile, settled.export_id)
    copies = {p.relative_to(destinations_root).as_posix() for p in destinations_root.rglob("*") if p.is_file()}
    assert copies == {f"inbound/{delivery.target_key}"}
    assert (destinations_root / "inbound" / delivery.target_key).read_bytes() == b"".join(
        get_storage().read_chunks(owners_file.storage_key)
    )
    received = sorted(address for m in smtp_server.messages for address in m.recipients)
    assert received == sorted([run_scenario.colleague.email, run_scenario.owner.email])


def running_with_a_lapsed_lease(run: ScheduleRun, earlier_attempts: list[str]) -> None:
    """Put the run where a worker that stopped leaves it: running at the attempt after
    `earlier_attempts` (their error codes), its lease lapsed long ago."""
    long_ago = utcnow() - timedelta(hours=1)
    for number, code in enumerate(earlier_attempts, 1):
        db.session.add(
            ScheduleRunAttempt(
                run_id=run.id, number=number, started_at=long_ago, ended_at=long_ago, outcome="failed", error_code=code
            )
        )
    db.session.add(ScheduleRunAttempt(run_id=run.id, number=len(earlier_attempts) + 1, started_at=long_ago))
    db.session.execute(
        update(ScheduleRun)
        .where(ScheduleRun.id == run.id)
        .values(
            status="running",
            attempt_count=len(earlier_attempts) + 1,
            dispatched_at=long_ago,
            lease_expires_at=long_ago,
            job_id="schedule-run-gone",
        )
    )
    db.session.commit()


def test_run_stalled_too_many_times_is_failed_with_timeout(run_scenario):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    running_with_a_lapsed_lease(run, ["worker_stopped"] * (RUNS.retries.max_attempts - 1))

    assert redeliver_lapsed(utcnow()) == 1

    failed = run_row(run.id)
    assert (failed.status, failed.failure_code) == ("failed", "timeout")
    db.session.rollback()
    assert db.session.get(Schedule, schedule.id, populate_existing=True).failure_streak == 1


def test_run_that_waited_long_for_the_mail_server_is_redelivered_when_its_worker_stops(run_scenario):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    running_with_a_lapsed_lease(run, ["mail_unavailable"] * RUNS.retries.max_attempts)

    assert redeliver_lapsed(utcnow()) == 1

    redelivered = run_row(run.id)
    assert redelivered.status == "running" and redelivered.job_id != "schedule-run-gone"


def a_run_row_is_being_changed() -> bool:
    """Some transaction holds a schedule run row it changed and has not committed yet."""
    changing = db.session.scalar(
        text(
            "SELECT count(*) FROM pg_locks"
            " WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND relation = CAST(:table AS regclass) AND mode = 'RowExclusiveLock' AND granted"
        ),
        {"table": ScheduleRun.__tablename__},
    )
    db.session.rollback()
    return changing > 0


def freeze_outside_a_lease_renewal(worker) -> None:
    """SIGSTOP the worker; again if it stopped inside a lease renewal's transaction, whose row lock
    would hold up the next attempt's start for as long as the worker stays frozen."""
    for _ in range(20):
        worker.freeze()
        if not a_run_row_is_being_changed():
            return
        worker.thaw()
        wait_for(lambda: not a_run_row_is_being_changed(), timeout=10, what="the lease renewal to commit")
    raise AssertionError("the worker was always inside a lease renewal when frozen")


def test_attempt_frozen_past_its_lease_neither_sends_nor_settles_and_each_recipient_gets_one_message(
    run_scenario, mail_to_smtp_server, smtp_server, start_worker, hold_lock
):
    mail_url = f"smtp://{smtp_server.host}:{smtp_server.port}"
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner", "someone@example.org"))
    run = run_scenario.admit(schedule)
    # Attempt 1 (in this process) makes the file and the recipient rows; the server refuses all three.
    smtp_server.refuse(3)
    assert process_run(run.id) == "retry_later"
    db.session.execute(update(ScheduleRun).where(ScheduleRun.id == run.id).values(next_attempt_at=None))
    db.session.commit()
    first_row = db.session.scalar(
        select(RecipientDelivery.id).where(RecipientDelivery.run_id == run.id).order_by(RecipientDelivery.id)
    )
    db.session.rollback()

    # Attempt 2 claims the first row (a person's), then stops reading the person's address, and is
    # frozen there: the claim committed, the message not sent.
    row_lock = hold_lock("SELECT id FROM query_schedule_deliveries WHERE id = :id FOR UPDATE", id=first_row)
    assert dispatch_pending(RUNS) == 1
    frozen_job = run_row(run.id).job_id
    frozen = start_worker(MAIL_URL=mail_url, LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    wait_for(lambda: row_lock.waiters() > 0, timeout=60, what="attempt 2 to claim the first row")
    people_lock = hold_lock(f"LOCK TABLE {Person.__tablename__} IN ACCESS EXCLUSIVE MODE")
    row_lock.release()
    wait_for(lambda: people_lock.waiters() > 0, timeout=60, what="attempt 2 to read the first recipient's address")
    freeze_outside_a_lease_renewal(frozen)
    people_lock.release()
    wait_for(
        lambda: run_row(run.id).lease_expires_at < utcnow(), timeout=30, what="the frozen attempt's lease to lapse"
    )

    # Attempt 3 starts on another worker, takes the frozen attempt's claim over and sends every row.
    start_worker(MAIL_URL=mail_url, LEASE_SECONDS=str(SHORT_LEASE_SECONDS))
    assert redeliver_lapsed(utcnow() + LOST_AFTER + timedelta(seconds=lease_seconds() + 1)) == 1
    wait_for(lambda: run_row(run.id).status == "succeeded", timeout=60, what="attempt 3 to settle the run")
    frozen.thaw()
    frozen_finished = lambda: Job.fetch(frozen_job, connection=redis_connection()).get_status() == "finished"  # noqa: E731
    wait_for(frozen_finished, timeout=60, what="the frozen attempt's job to end")
    received = sorted(address for m in smtp_server.messages for address in m.recipients)
    assert received == sorted([run_scenario.colleague.email, run_scenario.owner.email, "someone@example.org"])
    settled = run_row(run.id)
    assert [a.outcome for a in settled.attempts] == ["failed", "failed", "succeeded"]
    assert settled.attempts[1].error_code == "worker_stopped"
    assert {row.claimed_attempt for row in settled.deliveries} == {3}
