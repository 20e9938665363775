"""A schedule run's file delivered to the destinations its schedule chose, in this process, against
a directory destination and moto's S3 server over HTTP: what lands where and once, failures in
words, retries, and email-only schedules unchanged."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from app.domain.errors import TransitionRefused
from app.extensions import db
from app.models import ExportFile
from app.models.package_delivery import FailureClass
from app.models.schedule import RecipientDelivery, RunStatus, Schedule, ScheduleDestination, ScheduleRun
from app.models.schedule_destination_delivery import (
    DestinationDelivery,
    DestinationDeliveryAttempt,
    DestinationDeliveryStatus,
)
from app.models.types import utcnow
from app.security.credentials import encrypt_secret
from app.services.pages.public_link_tokens import link_token
from app.services.schedules import destination_deliveries
from app.services.schedules.schedule_runs import process_run
from app.storage import get_storage
from tests import factories
from tests.fixtures.s3 import BUCKET


def _choose(schedule, *destinations) -> None:
    for position, destination in enumerate(destinations):
        db.session.add(ScheduleDestination(schedule_id=schedule.id, destination_id=destination.id, position=position))
    db.session.commit()


def _deliveries(run_id: int) -> list[DestinationDelivery]:
    db.session.rollback()
    return list(
        db.session.scalars(
            select(DestinationDelivery)
            .where(DestinationDelivery.run_id == run_id)
            .order_by(DestinationDelivery.id)
            .execution_options(populate_existing=True)
        )
    )


def _attempts(delivery_id: int) -> list[tuple]:
    return [
        (a.number, a.outcome, a.failure_class, a.failure_code)
        for a in db.session.scalars(
            select(DestinationDeliveryAttempt)
            .where(DestinationDeliveryAttempt.delivery_id == delivery_id)
            .order_by(DestinationDeliveryAttempt.number)
        )
    ]


def _stored_file(run_id: int) -> tuple[ExportFile, bytes]:
    run = db.session.get_one(ScheduleRun, run_id, populate_existing=True)
    export = db.session.get_one(ExportFile, run.export_id)
    return export, b"".join(get_storage().read_chunks(export.storage_key))


def _files(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run_with_destinations(run_scenario, *destinations, **schedule_values):
    schedule = run_scenario.make_schedule(recipients=(), **schedule_values)
    _choose(schedule, *destinations)
    run = run_scenario.admit(schedule)
    assert process_run(run.id) == "succeeded"
    return schedule, run


def test_a_run_copies_its_file_once_to_each_chosen_destination_under_a_name_saying_what_it_holds(
    run_scenario, destinations_root, s3_destination, s3_account
):
    folder = factories.make_destination(run_scenario.workspace, path="exports/rhythm")
    bucket = s3_destination(run_scenario.workspace, path="rhythm/schedules")
    schedule, run = _run_with_destinations(run_scenario, folder, bucket)

    outcomes = [destination_deliveries.run_delivery(d.id) for d in _deliveries(run.id)]

    export, data = _stored_file(run.id)
    name = f"weekly-hours-zoe-b-amp-{schedule.id}/{run.occurrence_at.strftime('%Y-%m-%dT%H%MZ')}_{export.file_name}"
    assert outcomes == ["delivered", "delivered"]
    assert _files(destinations_root) == {f"exports/rhythm/{name}": data}
    listed = s3_account.client.list_objects_v2(Bucket=BUCKET)["Contents"]
    assert [item["Key"] for item in listed] == [f"rhythm/schedules/{name}"]
    assert s3_account.client.get_object(Bucket=BUCKET, Key=f"rhythm/schedules/{name}")["Body"].read() == data
    rows = _deliveries(run.id)
    assert [(r.destination_id, r.status, r.target_key) for r in rows] == [
        (folder.id, DestinationDeliveryStatus.DELIVERED, name),
        (bucket.id, DestinationDeliveryStatus.DELIVERED, name),
    ]
    assert rows[0].location == f"DESTINATIONS_ROOT/exports/rhythm/{name}"
    assert rows[1].location == f"s3://{BUCKET}/rhythm/schedules/{name}"
    assert [_attempts(r.id) for r in rows] == [[(1, "delivered", None, None)]] * 2


def test_a_run_processed_again_makes_no_second_delivery_and_no_second_copy(run_scenario, destinations_root):
    folder = factories.make_destination(run_scenario.workspace)
    _, run = _run_with_destinations(run_scenario, folder)
    first = _deliveries(run.id)
    assert destination_deliveries.run_delivery(first[0].id) == "delivered"

    again = db.session.get_one(ScheduleRun, run.id)
    export = db.session.get_one(ExportFile, again.export_id)
    made_again = destination_deliveries.create_deliveries(again, db.session.get_one(Schedule, run.schedule_id), export)

    assert made_again == []
    assert destination_deliveries.run_delivery(first[0].id) == "already_delivered"
    assert db.session.scalar(select(func.count()).select_from(DestinationDelivery)) == 1
    assert _attempts(first[0].id) == [(1, "delivered", None, None)]


def test_an_email_only_schedule_makes_no_destination_delivery(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule()
    factories.make_destination(run_scenario.workspace)  # the workspace's, not chosen
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "succeeded"

    assert _deliveries(run.id) == []
    statuses = db.session.scalars(select(RecipientDelivery.status).where(RecipientDelivery.run_id == run.id)).all()
    assert statuses == ["submitted"]
    assert len(smtp_server.messages) == 1


def test_a_schedule_with_destinations_and_no_recipients_succeeds_and_mails_nobody(
    run_scenario, destinations_root, smtp_server, mail_to_smtp_server
):
    _, run = _run_with_destinations(run_scenario, factories.make_destination(run_scenario.workspace))

    assert db.session.get_one(ScheduleRun, run.id).status == RunStatus.SUCCEEDED
    assert smtp_server.messages == []
    assert [d.status for d in _deliveries(run.id)] == [DestinationDeliveryStatus.PENDING]


def test_a_removed_destination_receives_nothing(run_scenario, destinations_root):
    kept = factories.make_destination(run_scenario.workspace)
    removed = factories.make_destination(run_scenario.workspace)
    schedule = run_scenario.make_schedule(recipients=())
    _choose(schedule, kept, removed)
    removed.removed_at = utcnow()
    db.session.commit()
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "succeeded"

    assert [d.destination_id for d in _deliveries(run.id)] == [kept.id]


def test_a_run_its_send_condition_skips_makes_no_destination_delivery(run_scenario, destinations_root):
    """ "Only when it has rows" and no rows: the run is skipped before any delivery row is made."""
    nothing = {**run_scenario.query.definition(), "filters": [{"column": "note", "op": "eq", "value": "no such"}]}
    folder = factories.make_destination(run_scenario.workspace)
    schedule = run_scenario.make_schedule(recipients=(), query_definition=nothing, send_condition="has_rows")
    _choose(schedule, folder)
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "skipped"

    assert _deliveries(run.id) == []
    assert _files(destinations_root) == {}


def test_wrong_credentials_fail_permanently_in_words_and_an_administrators_retry_delivers(
    run_scenario, s3_destination, s3_account
):
    admin = factories.make_member(run_scenario.workspace, role="admin").person
    bucket = s3_destination(run_scenario.workspace, secret="not-the-secret")
    _, run = _run_with_destinations(run_scenario, bucket)
    delivery = _deliveries(run.id)[0]

    assert destination_deliveries.run_delivery(delivery.id) == "failed"
    assert destination_deliveries.run_delivery(delivery.id) == "not_due"  # a permanent failure waits for a person

    failed = _deliveries(run.id)[0]
    assert (failed.status, failed.failure_class, failed.failure_code) == (
        "failed",
        "permanent",
        "SignatureDoesNotMatch",
    )
    assert failed.failure_summary == "SignatureDoesNotMatch: the secret access key does not match the access key ID."
    assert failed.next_attempt_at is None
    assert "not-the-secret" not in failed.failure_summary

    bucket.secret_ciphertext = encrypt_secret(s3_account.secret)
    db.session.commit()
    destination_deliveries.retry(run.schedule_id, delivery.id, seen_attempt=1, actor_id=admin.id)

    assert destination_deliveries.run_delivery(delivery.id) == "delivered"
    assert _attempts(delivery.id) == [
        (1, "failed", "permanent", "SignatureDoesNotMatch"),
        (2, "delivered", None, None),
    ]


def test_a_second_press_of_retry_is_refused_with_a_sentence(run_scenario, s3_destination, s3_account):
    admin = factories.make_member(run_scenario.workspace, role="admin").person
    _, run = _run_with_destinations(run_scenario, s3_destination(run_scenario.workspace, secret="wrong"))
    delivery = _deliveries(run.id)[0]
    destination_deliveries.run_delivery(delivery.id)
    destination_deliveries.retry(run.schedule_id, delivery.id, seen_attempt=1, actor_id=admin.id)

    with pytest.raises(TransitionRefused, match="already being retried"):
        destination_deliveries.retry(run.schedule_id, delivery.id, seen_attempt=1, actor_id=admin.id)


def test_an_unreachable_endpoint_fails_transiently_and_is_retried_after_the_copy_policy_s_delay(
    run_scenario, s3_destination, s3_account, free_port
):
    bucket = s3_destination(run_scenario.workspace, endpoint_url=f"http://127.0.0.1:{free_port}")
    _, run = _run_with_destinations(run_scenario, bucket)
    delivery = _deliveries(run.id)[0]
    before = utcnow()

    assert destination_deliveries.run_delivery(delivery.id) == "retry_later"

    row = _deliveries(run.id)[0]
    assert (row.status, row.failure_class) == ("failed", FailureClass.TRANSIENT)
    assert row.failure_summary.startswith("The endpoint refused the connection")
    assert before + timedelta(seconds=55) < row.next_attempt_at < utcnow() + timedelta(seconds=65)
    assert destination_deliveries.run_delivery(delivery.id) == "not_due"
    assert destination_deliveries.run_delivery(delivery.id, now=utcnow() + timedelta(minutes=2)) == "retry_later"
    assert [a[0:3] for a in _attempts(delivery.id)] == [(1, "failed", "transient"), (2, "failed", "transient")]


def test_the_fifth_transient_failure_gives_up_in_words(run_scenario, s3_destination, s3_account, free_port):
    bucket = s3_destination(run_scenario.workspace, endpoint_url=f"http://127.0.0.1:{free_port}")
    _, run = _run_with_destinations(run_scenario, bucket)
    delivery = _deliveries(run.id)[0]
    later = utcnow()

    outcomes = []
    for _ in range(5):
        later += timedelta(hours=3)
        outcomes.append(destination_deliveries.run_delivery(delivery.id, now=later))

    row = _deliveries(run.id)[0]
    assert outcomes == ["retry_later"] * 4 + ["failed"]
    assert (row.failure_class, row.failure_code) == ("permanent", "retries_exhausted")
    assert row.failure_summary.startswith("Gave up after 5 attempts; the last one: The endpoint refused")


def test_a_webhook_is_told_the_file_is_ready_with_a_signed_message_its_facts_and_link_and_no_rows(
    run_scenario, receiver, webhook_destination
):
    destination = webhook_destination(run_scenario.workspace)
    schedule, run = _run_with_destinations(run_scenario, destination)
    delivery = _deliveries(run.id)[0]

    assert destination_deliveries.run_delivery(delivery.id) == "delivered"

    export, data = _stored_file(run.id)
    [message] = receiver.received
    assert message.signature_valid is True
    assert message.headers["Rhythm-Message-Id"] == f"run-{run.id}-destination-{destination.id}"
    body = message.json
    assert body["type"] == "file.ready"
    assert body["schedule"] == {"name": schedule.name, "slug": f"weekly-hours-zoe-b-amp-{schedule.id}"}
    assert body["run"]["id"] == run.id
    assert body["file"] == {
        "name": export.file_name,
        "format": "csv",
        "rows": export.row_count,
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    # A link the receiver follows with no sign-in (tests/integration/schedule_runs/test_webhook_download_links.py).
    assert body["download"]["url"].endswith("/d/" + link_token(delivery.link_nonce, "destination_download"))
    assert data not in message.body
    assert _deliveries(run.id)[0].location == destination_deliveries.ANNOUNCED


def test_a_slack_channel_is_told_the_file_is_ready_and_a_refusal_fails_the_delivery_in_words(
    run_scenario, receiver, slack_destination
):
    _, run = _run_with_destinations(run_scenario, slack_destination(run_scenario.workspace))
    delivery = _deliveries(run.id)[0]
    receiver.status = 404

    assert destination_deliveries.run_delivery(delivery.id) == "failed"

    failed = _deliveries(run.id)[0]
    assert (failed.failure_class, failed.attempt_count) == ("permanent", 1)
    assert failed.failure_summary and "404" in failed.failure_summary
    receiver.status = 200
    destination_deliveries.retry(run.schedule_id, delivery.id, seen_attempt=1, actor_id=run_scenario.owner.id)
    assert destination_deliveries.run_delivery(delivery.id) == "delivered"
    export, _ = _stored_file(run.id)
    assert export.file_name in receiver.received[-1].json["text"]
