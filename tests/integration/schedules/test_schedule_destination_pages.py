"""The schedule pages' destinations: administrators choose them on the form (recipients then
optional), anyone else keeps what was chosen, the schedule page says what a destination does now,
the run history shows each delivery in words, and an administrator's Retry."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from markupsafe import escape
from sqlalchemy import select

from app.domain.schedules.schedule_rules import RUN_AS_RECIPIENTS_DESTINATIONS
from app.extensions import db
from app.models import AuditEvent
from app.models.schedule import RunTrigger, Schedule, ScheduleDestination
from app.models.schedule_destination_delivery import DestinationDelivery
from app.models.types import utcnow
from app.security.credentials import encrypt_secret
from app.services.schedules import destination_deliveries
from app.services.schedules.schedule_admission import admit_run
from app.services.schedules.schedule_runs import process_run
from tests import factories
from tests.integration.schedules.forms import schedule_form, schedules_url


def _chosen(schedule_id: int) -> list[int]:
    db.session.rollback()
    return list(
        db.session.scalars(
            select(ScheduleDestination.destination_id)
            .where(ScheduleDestination.schedule_id == schedule_id)
            .order_by(ScheduleDestination.position)
        )
    )


def test_an_administrator_chooses_destinations_and_then_needs_no_recipient(client, auth, world, destinations_root):
    query = factories.make_query(world.workspace, world.admin)
    first = factories.make_destination(world.workspace, name="Finance bucket")
    second = factories.make_destination(world.workspace, name="Payroll server")
    auth.login(world.admin.email)

    form = client.get(schedules_url(world, "new")).get_data(as_text=True)
    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, destinations=[str(second.id), str(first.id)])
    )

    assert 'name="destinations"' in form and "Finance bucket" in form and "Payroll server" in form
    assert response.status_code == 302
    schedule = db.session.scalar(select(Schedule))
    assert _chosen(schedule.id) == [first.id, second.id]
    assert schedule.recipients == []


def test_without_a_destination_a_schedule_still_needs_a_recipient(client, auth, world):
    query = factories.make_query(world.workspace, world.admin)
    auth.login(world.admin.email)

    response = client.post(schedules_url(world, "new"), data=schedule_form(query))

    assert response.status_code == 400
    assert "Choose at least one recipient." in response.get_data(as_text=True)


def test_a_schedule_that_runs_as_each_recipient_chooses_destinations_which_get_the_owner_s_file(
    client, auth, world, destinations_root
):
    query = factories.make_query(world.workspace, world.admin)
    folder = factories.make_destination(world.workspace)
    auth.login(world.admin.email)

    response = client.post(
        schedules_url(world, "new"),
        data=schedule_form(query, people=[str(world.admin.id)], destinations=[str(folder.id)], run_as_recipients="y"),
    )

    assert response.status_code == 302
    schedule = db.session.scalar(select(Schedule))
    assert schedule.run_as_recipients is True
    assert _chosen(schedule.id) == [folder.id]
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    said = escape(RUN_AS_RECIPIENTS_DESTINATIONS)
    assert said in page.split("<dt>Runs as</dt>", 1)[1].split("</dd>", 1)[0]
    assert said in client.get(schedules_url(world, "new")).get_data(as_text=True).split('id="destinations-hint"', 1)[1]


def test_another_workspace_s_or_a_removed_destination_is_refused_on_its_field(client, auth, world, destinations_root):
    query = factories.make_query(world.workspace, world.admin)
    theirs = factories.make_destination(world.other_workspace)
    removed = factories.make_destination(world.workspace, removed_at=utcnow())
    auth.login(world.admin.email)

    for chosen in (theirs, removed):
        response = client.post(schedules_url(world, "new"), data=schedule_form(query, destinations=[str(chosen.id)]))
        page = response.get_data(as_text=True)
        assert response.status_code == 400
        assert "A chosen destination is not one of this workspace&#39;s destinations (any more)." in page
    assert db.session.scalar(select(Schedule)) is None


def test_a_member_sees_the_destinations_chosen_cannot_change_them_and_keeps_them_when_saving(
    client, auth, world, destinations_root
):
    query = factories.make_query(world.workspace, world.member)
    destination = factories.make_destination(world.workspace, name="Finance bucket")
    other = factories.make_destination(world.workspace, name="Payroll server")
    schedule = factories.make_schedule(query, world.member)
    schedule.destinations.append(ScheduleDestination(destination_id=destination.id))
    db.session.commit()
    auth.login(world.member.email)

    form = client.get(schedules_url(world, f"{schedule.id}/edit")).get_data(as_text=True)
    kept = client.post(
        schedules_url(world, f"{schedule.id}/edit"),
        data=schedule_form(
            query, name="Renamed", people=[str(world.member.id)], destinations=[str(destination.id)], version="1"
        ),
    )
    refused = client.post(
        schedules_url(world, f"{schedule.id}/edit"),
        data=schedule_form(
            query, people=[str(world.member.id)], destinations=[str(destination.id), str(other.id)], version="2"
        ),
    )

    assert "Delivers to Finance bucket." in form and "Only the workspace's administrators choose destinations" in form
    assert 'type="checkbox" name="destinations"' not in form
    assert kept.status_code == 302
    assert refused.status_code == 400
    assert "Only the workspace&#39;s administrators choose the destinations" in refused.get_data(as_text=True)
    assert _chosen(schedule.id) == [destination.id]


def test_the_schedule_page_says_a_removed_destination_no_longer_receives(client, auth, world, destinations_root):
    query = factories.make_query(world.workspace, world.admin)
    schedule = factories.make_schedule(query, world.admin)
    removed = factories.make_destination(world.workspace, name="Old bucket", removed_at=utcnow())
    schedule.destinations.append(ScheduleDestination(destination_id=removed.id))
    db.session.commit()
    auth.login(world.admin.email)

    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)

    assert "Old bucket" in page and "removed: it no longer receives this schedule's files" in page


def _run_to(world, destination, name: str):
    """A schedule delivered to `destination` alone, and a run of it admitted by hand."""
    query = factories.make_query(world.workspace, world.admin)
    schedule = factories.make_schedule(query, world.admin, name=name)
    schedule.recipients = []
    schedule.destinations.append(ScheduleDestination(destination_id=destination.id))
    db.session.commit()
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=schedule.workspace_id,
        occurrence_at=utcnow().replace(second=0, microsecond=0),
        trigger=RunTrigger.MANUAL,
    )
    assert run is not None
    return schedule, run


def _failed_run(world, s3_destination, **destination_values):
    bucket = s3_destination(world.workspace, name="Finance bucket", **destination_values)
    schedule, run = _run_to(world, bucket, "Hours to finance")
    return schedule, bucket, run


def _announced(world, webhook_destination):
    """A run to a webhook, made and announced; its schedule and its one destination delivery's id."""
    schedule, run = _run_to(world, webhook_destination(world.workspace), "Hours to the webhook")
    assert process_run(run.id) == "succeeded"
    [delivery_id] = db.session.scalars(select(DestinationDelivery.id)).all()
    assert destination_deliveries.run_delivery(delivery_id) == "delivered"
    return schedule, delivery_id


def test_the_run_history_shows_a_failure_in_words_and_an_administrator_s_retry_delivers(
    client, auth, world, s3_destination, s3_account
):
    schedule, bucket, run = _failed_run(world, s3_destination, secret="not-the-secret")
    assert process_run(run.id) == "succeeded"
    [delivery_id] = db.session.scalars(select(DestinationDelivery.id)).all()
    assert destination_deliveries.run_delivery(delivery_id) == "failed"
    auth.login(world.admin.email)

    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    bucket.secret_ciphertext = encrypt_secret(s3_account.secret)
    db.session.commit()
    retried = client.post(
        schedules_url(world, f"{schedule.id}/destination-deliveries/{delivery_id}/retry"), data={"attempt": "1"}
    )
    again = client.post(
        schedules_url(world, f"{schedule.id}/destination-deliveries/{delivery_id}/retry"), data={"attempt": "1"}
    )

    assert "Finance bucket" in page and "SignatureDoesNotMatch: the secret access key does not match" in page
    assert f'id="destination-delivery-{delivery_id}-retry"' in page
    assert "not-the-secret" not in page
    assert retried.status_code == 302
    assert again.status_code == 409 and "already being retried" in again.get_data(as_text=True)
    assert destination_deliveries.run_delivery(delivery_id) == "delivered"
    delivered = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert "s3://" in delivered and f'id="destination-delivery-{delivery_id}-retry"' not in delivered
    actions = db.session.scalars(select(AuditEvent.action).where(AuditEvent.subject_type == "schedule_run")).all()
    assert actions == ["schedule_destination_delivery.retried"]


def test_a_run_whose_only_delivery_failed_says_so_beside_its_status_until_a_retry_delivers(
    client, auth, world, s3_destination, s3_account
):
    schedule, bucket, run = _failed_run(world, s3_destination, secret="not-the-secret")
    process_run(run.id)
    [delivery_id] = db.session.scalars(select(DestinationDelivery.id)).all()
    destination_deliveries.run_delivery(delivery_id)
    auth.login(world.admin.email)
    heading = re.compile(rf'id="run-{run.id}-destinations-failed">([^<]*)<')

    failed = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    bucket.secret_ciphertext = encrypt_secret(s3_account.secret)
    db.session.commit()
    client.post(
        schedules_url(world, f"{schedule.id}/destination-deliveries/{delivery_id}/retry"), data={"attempt": "1"}
    )
    destination_deliveries.run_delivery(delivery_id)
    delivered = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)

    assert heading.findall(failed) == ["1 of 1 destination failed"]
    assert heading.findall(delivered) == []


def test_only_administrators_see_and_may_press_retry(client, auth, world, s3_destination, s3_account):
    schedule, _, run = _failed_run(world, s3_destination, secret="not-the-secret")
    schedule.owner_id = world.member.id
    db.session.commit()
    process_run(run.id)
    [delivery_id] = db.session.scalars(select(DestinationDelivery.id)).all()
    destination_deliveries.run_delivery(delivery_id)
    auth.login(world.member.email)

    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    pressed = client.post(
        schedules_url(world, f"{schedule.id}/destination-deliveries/{delivery_id}/retry"), data={"attempt": "1"}
    )

    assert "SignatureDoesNotMatch" in page and f'id="destination-delivery-{delivery_id}-retry"' not in page
    assert pressed.status_code == 404


def test_a_webhook_s_delivery_reads_announced_in_the_run_history(client, auth, world, receiver, webhook_destination):
    schedule, delivery_id = _announced(world, webhook_destination)
    auth.login(world.admin.email)

    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)

    assert "Announced, with a link to the file." in page


def test_the_run_history_counts_the_downloads_by_a_webhook_s_link(
    app, client, auth, world, receiver, webhook_destination
):
    schedule, delivery_id = _announced(world, webhook_destination)
    link = urlsplit(receiver.received[-1].json["download"]["url"]).path
    receiver_client = app.test_client()  # the receiver's own, with no session
    assert [receiver_client.get(link).status_code for _ in range(2)] == [200, 200]
    auth.login(world.admin.email)

    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)

    row = re.search(rf'<tr id="destination-delivery-{delivery_id}">.*?</tr>', page, re.S)
    assert row is not None
    assert "Downloads</th></tr></thead>" in page
    assert row.group(0).endswith('<td class="num">2</td></tr>')
