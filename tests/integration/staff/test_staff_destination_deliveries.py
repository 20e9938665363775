"""The staff console's schedule run page shows the run's copies to destinations beside its
recipient deliveries: where each goes, its attempts with their class and code, and what went wrong."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from app.domain.schedules import destination_delivery
from app.extensions import db
from app.models.schedule import DestinationDelivery
from app.models.types import utcnow
from tests import factories


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
