"""The staff console and a schedule run's copies to destinations: the run's page shows them beside
its recipient deliveries (where each goes, its attempts with their class and code, what went
wrong), and a staff requeue of a copy's failed job dispatches it at once, or says why not."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import select, update

from app.domain.schedules import destination_delivery
from app.extensions import db
from app.models.schedule_destination_delivery import DestinationDelivery
from app.models.types import utcnow
from app.services.schedules.destination_work import DESTINATION_DELIVERIES
from app.services.work import engine
from app.services.work.claims import dispatch_pending
from app.services.work.queue import WorkPriority, work_queue
from tests import factories
from tests.fixtures.workers import fail_job_as_a_worker_would


def test_a_run_s_failed_copy_to_a_destination_shows_its_attempts_and_the_failure_in_words(client, auth, world, staff):
    query = factories.make_query(world.workspace, world.admin)
    run = factories.make_run(factories.make_schedule(query, world.admin), factories.make_export(query, world.admin))
    destination = factories.make_destination(world.workspace, name="Finance folder")
    destination_delivery.create(
        workspace_id=world.workspace.id, run_id=run.id, destination_id=destination.id, target_key="hours-1/x.csv"
    )
    db.session.commit()
    delivery_id = db.session.scalar(select(DestinationDelivery.id))
    attempt = destination_delivery.start(delivery_id, "worker-1", utcnow() + timedelta(minutes=1))
    destination_delivery.failed(
        delivery_id,
        attempt,
        ("transient", "timeout", "The endpoint did not answer within 5 seconds."),
        retry_at=utcnow() + timedelta(minutes=1),
    )
    auth.login(staff.email)

    page = client.get(f"/staff/runs/{run.id}").text

    assert "Destination deliveries" in page and "Finance folder" in page
    assert "<code>hours-1/x.csv</code>" in page
    assert "1: failed (<code>transient timeout</code>)" in page
    assert "The endpoint did not answer within 5 seconds. Next attempt" in page


def test_a_run_without_destinations_shows_no_destination_section(client, auth, world, staff):
    query = factories.make_query(world.workspace, world.admin)
    run = factories.make_run(factories.make_schedule(query, world.admin), factories.make_export(query, world.admin))
    auth.login(staff.email)

    assert "Destination deliveries" not in client.get(f"/staff/runs/{run.id}").text


def _copy_whose_worker_died(world) -> tuple[int, str]:
    """A run's copy to a folder whose worker died mid-copy: its job failed in RQ, and the watchdog
    failed its attempt as transient, retried only after the backoff."""
    query = factories.make_query(world.workspace, world.admin)
    run = factories.make_run(factories.make_schedule(query, world.admin), factories.make_export(query, world.admin))
    destination_delivery.create(
        workspace_id=world.workspace.id,
        run_id=run.id,
        destination_id=factories.make_destination(world.workspace).id,
        target_key="hours-1/x.csv",
    )
    db.session.commit()
    assert dispatch_pending(DESTINATION_DELIVERIES, utcnow()) == 1
    delivery = db.session.scalars(select(DestinationDelivery)).one()
    job_id = delivery.job_id
    destination_delivery.start(delivery.id, "dead-worker", utcnow() - timedelta(seconds=1))
    fail_job_as_a_worker_would(job_id, "Traceback (most recent call last):\nWorkHorseKilled: 9")
    assert engine.redeliver_lapsed(utcnow()) == 1
    return delivery.id, job_id


def test_staff_requeue_of_a_copy_waiting_for_its_backoff_dispatches_it_at_once(client, auth, world, staff):
    delivery_id, job_id = _copy_whose_worker_died(world)
    auth.login(staff.email)

    response = client.post(
        "/staff/queues/requeue", data={"job_id": job_id, "reason": "Worker replaced"}, follow_redirects=True
    )

    assert f"Schedule destination delivery {delivery_id} was dispatched again." in response.text
    db.session.rollback()
    requeued = db.session.get_one(DestinationDelivery, delivery_id, populate_existing=True)
    assert (requeued.status, requeued.failure_code) == ("failed", "worker_stopped")
    assert requeued.next_attempt_at <= utcnow()
    assert requeued.job_id in work_queue(WorkPriority.SCHEDULED).get_job_ids()


def test_staff_requeue_of_a_copy_that_failed_for_good_is_refused_with_a_sentence(client, auth, world, staff):
    delivery_id, job_id = _copy_whose_worker_died(world)
    db.session.execute(
        update(DestinationDelivery)
        .where(DestinationDelivery.id == delivery_id)
        .values(failure_class="permanent", next_attempt_at=None)
    )
    db.session.commit()
    auth.login(staff.email)

    response = client.post(
        "/staff/queues/requeue", data={"job_id": job_id, "reason": "Try again"}, follow_redirects=True
    )

    assert (
        f"Schedule destination delivery {delivery_id} failed for good; a workspace administrator retries it "
        "from the run history."
    ) in response.text


def test_a_run_s_webhook_delivery_shows_the_downloads_by_its_link(
    client, auth, world, staff, receiver, webhook_destination
):
    query = factories.make_query(world.workspace, world.admin)
    run = factories.make_run(factories.make_schedule(query, world.admin), factories.make_export(query, world.admin))
    webhook = webhook_destination(world.workspace, name="Payroll webhook")
    folder = factories.make_destination(world.workspace, name="Finance folder")
    for destination in (webhook, folder):
        destination_delivery.create(
            workspace_id=world.workspace.id, run_id=run.id, destination_id=destination.id, target_key="hours-1/x.csv"
        )
    db.session.execute(
        update(DestinationDelivery)
        .where(DestinationDelivery.destination_id == webhook.id)
        .values(download_count=3, last_downloaded_at=utcnow())
    )
    db.session.commit()
    auth.login(staff.email)

    page = client.get(f"/staff/runs/{run.id}").text

    assert "Downloads by its link" in page
    webhook_row, folder_row = re.findall(r"<tr><td>#\d+</td>.*?</tr>", page, re.S)[-2:]
    assert "Payroll webhook" in webhook_row and "<td>3, the last " in webhook_row
    assert "Finance folder" in folder_row and "<td>no link</td>" in folder_row
