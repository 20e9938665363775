"""Packages delivered to an SFTP server (a real SSH server on the loopback) by real rq workers:
volumes, SHA256SUMS, then the manifest, each appearing whole; the failures recorded in words."""

from __future__ import annotations

from datetime import timedelta

from app.destinations.sftp import PARTIAL_MARK, fingerprint
from app.models.package_delivery import DeliveryStatus
from app.models.types import utcnow
from app.services.work.claims import dispatch_pending
from app.services.workspace_export import package_delivery
from app.services.workspace_export.delivery_work import DELIVERIES
from tests import factories
from tests.fixtures.workers import wait_for
from tests.integration.package_delivery.delivery_reading import attempt_outcomes, delivery_row


def _left_behind():
    """The creation time of a pending delivery whose maker died before running it."""
    return utcnow() - timedelta(minutes=5)


def test_a_package_is_delivered_by_a_worker_manifest_last_each_file_whole(
    stored_package, world, sftp_server, sftp_destination, start_worker
):
    destination = sftp_destination(world.workspace, path="inbound/rhythm")
    delivery = factories.make_package_delivery(stored_package.package, destination, created_at=_left_behind())
    worker = start_worker()

    assert dispatch_pending(DELIVERIES, utcnow()) == 1
    wait_for(lambda: delivery_row(delivery.id).status == DeliveryStatus.DELIVERED, what="the delivery")
    worker.stop()

    expected = stored_package.expected_at("inbound/rhythm")
    assert sftp_server.files() == expected
    row = delivery_row(delivery.id)
    folder = next(iter(expected)).rsplit("/", 1)[0]
    assert row.location == f"sftp://{sftp_server.user}@127.0.0.1:{sftp_server.port}/{folder}/"
    # Each file appeared whole by one rename from its hidden temporary name; the manifest last.
    assert [target for _, target in sftp_server.renames] == list(expected)
    assert all(PARTIAL_MARK in source.rsplit("/", 1)[1] for source, _ in sftp_server.renames)
    assert sftp_server.password not in worker.output()


def test_a_wrong_password_fails_permanently_in_words(stored_package, world, sftp_server, sftp_destination):
    delivery = factories.make_package_delivery(
        stored_package.package, sftp_destination(world.workspace, secret="not-the-password")
    )

    assert package_delivery.run_delivery(delivery.id) == "failed"

    row = delivery_row(delivery.id)
    assert attempt_outcomes(delivery.id) == [(1, "failed", "permanent", "login_refused")]
    assert row.failure_summary == "The SFTP server refused the login: check the user name and the password."
    assert sftp_server.files() == {}


def test_a_server_that_is_down_is_retried_later(stored_package, world, sftp_server, sftp_destination):
    delivery = factories.make_package_delivery(stored_package.package, sftp_destination(world.workspace))
    sftp_server.stop()

    assert package_delivery.run_delivery(delivery.id) == "retry_later"

    row = delivery_row(delivery.id)
    assert attempt_outcomes(delivery.id) == [(1, "failed", "transient", "connection_refused")]
    assert row.next_attempt_at is not None and "refused the connection" in row.failure_summary


def test_a_changed_host_key_fails_permanently_naming_both_keys_and_sends_nothing(
    stored_package, world, sftp_server, sftp_destination
):
    delivery = factories.make_package_delivery(stored_package.package, sftp_destination(world.workspace))
    pinned = fingerprint(sftp_server.host_key)
    sftp_server.replace_host_key()

    assert package_delivery.run_delivery(delivery.id) == "failed"

    row = delivery_row(delivery.id)
    assert attempt_outcomes(delivery.id) == [(1, "failed", "permanent", "host_key_changed")]
    assert pinned in row.failure_summary and fingerprint(sftp_server.host_key) in row.failure_summary
    assert sftp_server.files() == {}


def test_no_delivery_goes_to_an_unpinned_host(stored_package, world, sftp_server, sftp_destination):
    delivery = factories.make_package_delivery(stored_package.package, sftp_destination(world.workspace, host_key=None))

    assert package_delivery.run_delivery(delivery.id) == "failed"

    assert attempt_outcomes(delivery.id) == [(1, "failed", "permanent", "host_key_not_pinned")]
    assert sftp_server.files() == {}
