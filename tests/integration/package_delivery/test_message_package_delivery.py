"""A package's delivery to a webhook or Slack destination: no file is sent, the receiver is told
the package is ready (its volumes' names, rows, sizes and SHA-256, and a link to its page), and a
failure is recorded by class like any other delivery."""

from __future__ import annotations

import hashlib

from app.models.package_delivery import DeliveryStatus
from app.services.workspace_export import package_delivery
from tests import factories
from tests.fixtures.message_receiver import Receiver
from tests.integration.package_delivery.delivery_reading import attempt_outcomes, delivery_row


def test_a_webhook_is_told_the_package_is_ready_with_a_signed_message_and_no_data(
    stored_package, world, receiver: Receiver, webhook_destination
):
    destination = webhook_destination(world.workspace)
    delivery = factories.make_package_delivery(stored_package.package, destination)

    assert package_delivery.run_delivery(delivery.id) == "delivered"

    [message] = receiver.received
    assert message.signature_valid is True
    assert message.headers["Rhythm-Message-Id"] == f"package-{stored_package.package.id}-destination-{destination.id}"
    body = message.json
    assert body["type"] == "package.ready"
    assert body["package"]["id"] == stored_package.package.id
    assert body["package"]["url"].endswith(f"/w/{world.workspace.id}/export/packages/{stored_package.package.id}")
    assert body["volumes"] == [
        {"name": name, "rows": 1, "size_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in stored_package.objects.items()
        if name != "manifest.json"
    ]
    assert len(message.body) < 2000  # facts, not the package's bytes
    assert delivery_row(delivery.id).location == package_delivery.ANNOUNCED


def test_a_slack_channel_is_told_the_package_is_ready_with_a_link_to_its_page(
    stored_package, world, receiver: Receiver, slack_destination
):
    delivery = factories.make_package_delivery(stored_package.package, slack_destination(world.workspace))

    assert package_delivery.run_delivery(delivery.id) == "delivered"

    text = receiver.received[0].json["text"]
    assert "2 volumes" in text and f"{stored_package.package.row_count:,} rows" in text
    assert f"/export/packages/{stored_package.package.id}|Open the package>" in text


def test_a_receiver_that_is_busy_leaves_the_delivery_waiting_for_its_retry(
    stored_package, world, receiver: Receiver, webhook_destination
):
    receiver.status = 503
    delivery = factories.make_package_delivery(stored_package.package, webhook_destination(world.workspace))

    assert package_delivery.run_delivery(delivery.id) == "retry_later"

    row = delivery_row(delivery.id)
    assert attempt_outcomes(delivery.id) == [(1, "failed", "transient", "http_503")]
    assert row.status == DeliveryStatus.FAILED and row.next_attempt_at is not None


def test_a_receiver_that_refuses_fails_the_delivery_for_good_in_words(
    stored_package, world, receiver: Receiver, webhook_destination
):
    receiver.status = 404
    delivery = factories.make_package_delivery(stored_package.package, webhook_destination(world.workspace))

    assert package_delivery.run_delivery(delivery.id) == "failed"

    assert attempt_outcomes(delivery.id) == [(1, "failed", "permanent", "http_404")]
    assert delivery_row(delivery.id).failure_summary == (
        "The webhook answered HTTP 404 Not Found: nothing is there: check the URL's path."
    )
