"""run_delivery, create_deliveries and deliver_package in this process, against a directory
destination and moto's S3 server: what lands where, failures, retries and notices."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select, update

from app.domain.timing.retry_policy import COPY_TO_A_DESTINATION
from app.domain.workspace_export import package_delivery_lifecycle
from app.extensions import db
from app.models.export_notice import ExportNotice, NoticeKind
from app.models.package_delivery import DeliveryStatus, ExportDelivery, FailureClass
from app.models.types import utcnow
from app.services.work import engine
from app.services.workspace_export import export_notices, package_delivery
from tests import factories
from tests.fixtures.s3 import BUCKET
from tests.integration.package_delivery.delivery_reading import attempt_outcomes, delivery_row


def _files(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_one_delivery_per_live_destination_and_disabled_ones_are_withheld(stored_package, world, destinations_root):
    enabled = factories.make_destination(world.workspace)
    disabled = factories.make_destination(world.workspace, enabled=False)
    factories.make_destination(world.workspace, removed_at=utcnow())
    factories.make_destination(world.other_workspace)

    ids = package_delivery.create_deliveries(stored_package.package.id)

    rows = [delivery_row(i) for i in ids]
    assert [(r.destination_id, r.status) for r in rows] == [
        (enabled.id, DeliveryStatus.PENDING),
        (disabled.id, DeliveryStatus.WITHHELD),
    ]


def test_creating_the_deliveries_again_keeps_the_rows_made_before(stored_package, world, destinations_root):
    factories.make_destination(world.workspace)

    first = package_delivery.create_deliveries(stored_package.package.id)
    second = package_delivery.create_deliveries(stored_package.package.id)

    assert first == second
    assert db.session.scalar(select(func.count()).select_from(ExportDelivery)) == 1


def test_a_package_lands_whole_in_a_directory_destination(stored_package, world, destinations_root):
    destination = factories.make_destination(world.workspace, path="exports/rhythm")

    package_delivery.deliver_package(stored_package.package.id)

    row = db.session.scalars(select(ExportDelivery).where(ExportDelivery.destination_id == destination.id)).one()
    assert row.status == DeliveryStatus.DELIVERED
    assert _files(destinations_root) == stored_package.expected_at("exports/rhythm")
    # Where people read it: under the configured root, never the server's own path.
    assert row.location.startswith(f"DESTINATIONS_ROOT/exports/rhythm/workspace-{world.workspace.id}/")
    assert attempt_outcomes(row.id) == [(1, "delivered", None, None)]


def test_a_package_lands_whole_in_a_bucket(stored_package, world, s3_destination, s3_account):
    destination = s3_destination(world.workspace, path="rhythm/exports")
    delivery = factories.make_package_delivery(stored_package.package, destination)

    outcome = package_delivery.run_delivery(delivery.id)

    listed = s3_account.client.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    stored = {
        item["Key"]: s3_account.client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read() for item in listed
    }
    assert outcome == "delivered"
    assert stored == stored_package.expected_at("rhythm/exports")
    assert delivery_row(delivery.id).location.startswith(f"s3://{BUCKET}/rhythm/exports/workspace-")


def test_wrong_credentials_fail_permanently_and_notify_once_even_when_run_twice(
    stored_package, world, s3_destination, smtp_server, mail_to_smtp_server
):
    destination = s3_destination(world.workspace, secret="not-the-right-secret")
    delivery = factories.make_package_delivery(stored_package.package, destination)

    first = package_delivery.run_delivery(delivery.id)
    second = package_delivery.run_delivery(delivery.id)
    export_notices.notify(NoticeKind.DELIVERY_FAILED, "delivery", delivery.id, world.workspace.id)

    row = delivery_row(delivery.id)
    assert (first, second) == ("failed", "not_due")
    assert (row.status, row.failure_class, row.failure_code) == ("failed", "permanent", "SignatureDoesNotMatch")
    assert row.next_attempt_at is None
    assert attempt_outcomes(delivery.id) == [(1, "failed", "permanent", "SignatureDoesNotMatch")]
    assert [m.recipients for m in smtp_server.messages] == [[world.admin.email]]
    assert "not-the-right-secret" not in smtp_server.messages[0].part("text/plain")


def test_a_transient_failure_waits_for_its_retry_time(stored_package, world, s3_destination, free_port):
    destination = s3_destination(world.workspace, endpoint_url=f"http://127.0.0.1:{free_port}")
    delivery = factories.make_package_delivery(stored_package.package, destination)
    before = utcnow()

    outcome = package_delivery.run_delivery(delivery.id)

    row = delivery_row(delivery.id)
    assert (outcome, row.status, row.failure_class, row.failure_code) == (
        "retry_later",
        "failed",
        "transient",
        "connection_failed",
    )
    assert before + timedelta(minutes=1) <= row.next_attempt_at <= utcnow() + timedelta(minutes=1)
    assert package_delivery.run_delivery(delivery.id) == "not_due"
    assert db.session.scalar(select(func.count()).select_from(ExportNotice)) == 0


def test_the_last_transient_failure_becomes_retries_exhausted_and_notifies(
    stored_package, world, s3_destination, free_port, smtp_server, mail_to_smtp_server
):
    destination = s3_destination(world.workspace, endpoint_url=f"http://127.0.0.1:{free_port}")
    delivery = factories.make_package_delivery(stored_package.package, destination)
    later = utcnow()
    outcomes = []
    for _ in range(COPY_TO_A_DESTINATION.max_attempts):
        outcomes.append(package_delivery.run_delivery(delivery.id, now=later))
        later += timedelta(hours=3)

    row = delivery_row(delivery.id)
    assert outcomes == ["retry_later"] * (COPY_TO_A_DESTINATION.max_attempts - 1) + ["failed"]
    assert (row.failure_class, row.failure_code) == (FailureClass.PERMANENT, "retries_exhausted")
    assert row.failure_summary.startswith("Gave up after 5 attempts; the last one: The endpoint refused the connection")
    assert [a[0] for a in attempt_outcomes(delivery.id)] == [1, 2, 3, 4, 5]
    assert len(smtp_server.messages) == 1


def test_a_delivery_of_a_package_no_longer_available_expires(stored_package, world, destinations_root):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    stored_package.package.status = "expired"
    db.session.commit()

    assert package_delivery.run_delivery(delivery.id) == "expired"
    assert delivery_row(delivery.id).status == DeliveryStatus.EXPIRED
    assert list(destinations_root.iterdir()) == []


def test_a_pending_delivery_of_a_package_past_its_retention_is_not_copied(stored_package, world, destinations_root):
    """A minute past its deadline and not yet swept: its download already says it expired."""
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    stored_package.package.expires_at = utcnow() - timedelta(minutes=1)
    db.session.commit()

    package_delivery.run_delivery(delivery.id)

    assert delivery_row(delivery.id).attempt_count == 0
    assert list(destinations_root.iterdir()) == []


def test_a_destination_disabled_before_its_pending_delivery_ran_withholds_it(stored_package, world, destinations_root):
    destination = factories.make_destination(world.workspace)
    delivery = factories.make_package_delivery(stored_package.package, destination)
    destination.enabled = False
    db.session.commit()

    assert package_delivery.run_delivery(delivery.id) == "withheld"
    assert delivery_row(delivery.id).status == DeliveryStatus.WITHHELD


def test_a_directory_destination_without_a_root_fails_permanently(
    stored_package, world, smtp_server, mail_to_smtp_server
):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))

    assert package_delivery.run_delivery(delivery.id) == "failed"
    row = delivery_row(delivery.id)
    assert (row.failure_class, row.failure_code) == ("permanent", "directory_not_configured")


def test_an_attempt_whose_worker_stopped_becomes_a_transient_failure(stored_package, world, destinations_root):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    started = utcnow() - timedelta(minutes=10)
    package_delivery_lifecycle.start(delivery.id, "dead-worker", started + timedelta(seconds=30), now=started)

    settled = engine.redeliver_lapsed(utcnow())

    row = delivery_row(delivery.id)
    assert settled == 1
    assert (row.status, row.failure_class, row.failure_code) == ("failed", "transient", "worker_stopped")
    assert "dead-worker" in row.failure_summary
    assert row.next_attempt_at is not None
    assert attempt_outcomes(delivery.id) == [(1, "failed", "transient", "worker_stopped")]


def _killed_mid_copy(stored_package, destination, destinations_root, attempts_before: int = 0) -> ExportDelivery:
    """A delivery whose attempt copied its first volume to the destination and then lost its worker."""
    delivery = factories.make_package_delivery(stored_package.package, destination)
    started = utcnow() - timedelta(minutes=10)
    db.session.execute(
        update(ExportDelivery).where(ExportDelivery.id == delivery.id).values(attempt_count=attempts_before)
    )
    db.session.commit()
    package_delivery_lifecycle.start(delivery.id, "dead-worker", started + timedelta(seconds=30), now=started)
    first_volume, data = next(iter(stored_package.expected_at(destination.path).items()))
    copied = destinations_root / first_volume
    copied.parent.mkdir(parents=True)
    copied.write_bytes(data)
    return delivery


def test_a_copy_its_dead_worker_left_is_removed_while_the_retry_waits(stored_package, world, destinations_root):
    destination = factories.make_destination(world.workspace, path="exports/rhythm")
    delivery = _killed_mid_copy(stored_package, destination, destinations_root)
    assert _files(destinations_root)

    assert engine.redeliver_lapsed(utcnow()) == 1

    row = delivery_row(delivery.id)
    assert (row.status, row.failure_class, row.failure_code) == ("failed", "transient", "worker_stopped")
    assert _files(destinations_root) == {}


def test_a_copy_left_by_the_last_attempt_s_dead_worker_is_removed_as_it_is_given_up(
    stored_package, world, destinations_root
):
    destination = factories.make_destination(world.workspace, path="exports/rhythm")
    last = COPY_TO_A_DESTINATION.max_attempts
    delivery = _killed_mid_copy(stored_package, destination, destinations_root, attempts_before=last - 1)

    assert engine.redeliver_lapsed(utcnow()) == 1

    row = delivery_row(delivery.id)
    assert (row.attempt_count, row.failure_class, row.failure_code) == (last, "permanent", "retries_exhausted")
    assert _files(destinations_root) == {}


def test_a_live_attempt_is_not_settled_by_the_watchdog(stored_package, world, destinations_root):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    package_delivery_lifecycle.start(delivery.id, "live-worker", utcnow() + timedelta(seconds=30))

    assert engine.redeliver_lapsed(utcnow()) == 0
    assert delivery_row(delivery.id).status == DeliveryStatus.DELIVERING


def test_a_retry_to_a_destination_disabled_meanwhile_does_not_start(stored_package, world, destinations_root):
    destination = factories.make_destination(world.workspace)
    delivery = factories.make_package_delivery(stored_package.package, destination)
    number = package_delivery_lifecycle.start(delivery.id, "worker-1", utcnow() + timedelta(seconds=30))
    package_delivery_lifecycle.failed(delivery.id, number, "transient", "timeout", "ReadTimeoutError", utcnow())
    destination.enabled = False
    db.session.commit()

    assert package_delivery.run_delivery(delivery.id) == "destination_disabled"
    assert (delivery_row(delivery.id).status, delivery_row(delivery.id).attempt_count) == (DeliveryStatus.FAILED, 1)
    assert list(destinations_root.iterdir()) == []


def test_a_delivered_row_is_acknowledged_without_a_new_attempt(stored_package, world, destinations_root):
    delivery = factories.make_package_delivery(stored_package.package, factories.make_destination(world.workspace))
    assert package_delivery.run_delivery(delivery.id) == "delivered"

    assert package_delivery.run_delivery(delivery.id) == "already_delivered"
    assert attempt_outcomes(delivery.id) == [(1, "delivered", None, None)]
