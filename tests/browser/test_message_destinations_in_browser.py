"""Webhook and Slack destinations in Chromium, against the loopback receiver (which checks a
webhook's signature as a customer's would): added through the form, the webhook's signing secret
shown once and not after a reload, Test connection through htmx, then a package announced to
each, failing for a passing reason, retried from the package's page to a permanent refusal, and
retried again to a message received, by a real rq worker."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.models.export_destination import ExportDestination
from app.models.package_delivery import DeliveryStatus, ExportDelivery
from app.services.workspace_export import package_delivery
from tests import factories
from tests.fixtures.browser import accessibility_violations, fresh, htmx_swap, sign_in
from tests.fixtures.message_receiver import Receiver
from tests.fixtures.workers import wait_for


def _destination() -> ExportDestination:
    return fresh(select(ExportDestination)).scalar_one()


def _delivery_status(delivery_id: int) -> tuple[str, int]:
    row = fresh(select(ExportDelivery).where(ExportDelivery.id == delivery_id)).scalar_one()
    return row.status, row.attempt_count


def _announce_fail_and_retry(page, live_server, world, receiver: Receiver, start_worker) -> None:
    """A package announced to the destination: a 503 (transient), Retry to a 410 (permanent),
    Retry to a 200 (told), each outcome read on the package's page."""
    package = factories.make_package(factories.make_execution(world.workspace))
    delivery = factories.make_package_delivery(package, _destination())
    receiver.status = 503
    assert package_delivery.run_delivery(delivery.id) == "retry_later"
    start_worker()
    page.goto(f"{live_server}/w/{world.workspace.id}/export/packages/{package.id}")
    card = page.locator(f"#delivery-{delivery.id}")
    card.get_by_text("not taken, for a passing reason").wait_for()
    card.get_by_text("HTTP 503 Service Unavailable").first.wait_for()

    receiver.status = 410
    # The form's answer is a redirect back to this page: reloading before it has arrived would
    # reload a page that is being replaced.
    with page.expect_navigation():
        card.get_by_role("button", name="Retry").click()
    wait_for(lambda: _delivery_status(delivery.id) == (DeliveryStatus.FAILED, 2), what="the refused retry")
    page.reload()
    card.get_by_text("is not sent again on its own").wait_for()
    card.get_by_text("HTTP 410 Gone").first.wait_for()

    receiver.status = 200
    with page.expect_navigation():
        card.get_by_role("button", name="Retry").click()
    wait_for(lambda: _delivery_status(delivery.id) == (DeliveryStatus.DELIVERED, 3), what="the delivered retry")
    page.reload()
    card.get_by_text("was sent a message with a link to this page").wait_for()


@pytest.mark.browser
def test_a_webhook_is_added_its_secret_shown_once_tested_and_told_of_a_package(
    world, live_server, browser_page, browser_console_errors, receiver: Receiver, start_worker
):
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/destinations")

    page.get_by_label("Webhook (a signed message with a download link)").check()
    assert page.get_by_label("Bucket name").is_hidden()
    assert page.get_by_label("Destination path").is_hidden()
    page.get_by_label("Name", exact=True).fill("Ops webhook")
    page.locator("#url").fill(f"{receiver.url}/hooks/rhythm")
    page.get_by_role("button", name="Add destination").click()

    shown = page.locator("#signing-secret")
    shown.wait_for()
    secret = shown.inner_text().strip()
    assert secret.startswith("whsec_")
    assert page.get_by_role("button", name="Copy the signing secret").is_visible()
    assert accessibility_violations(page) == []
    receiver.secret = secret

    page.get_by_role("link", name="Continue to the destination").click()
    page.wait_for_url(re.compile(r"/export/destinations/\d+$"))
    assert secret not in page.content()
    page.reload()
    assert secret not in page.content()
    page.locator("#webhook-url", has_text=f"{receiver.url}/hooks/rhythm").wait_for()

    htmx_swap(page, lambda: page.get_by_role("button", name="Test connection").click())
    page.locator("#test-result", has_text="Connected.").wait_for()
    assert [message.signature_valid for message in receiver.received] == [True]
    assert accessibility_violations(page) == []

    _announce_fail_and_retry(page, live_server, world, receiver, start_worker)
    assert receiver.received[-1].signature_valid is True
    assert receiver.received[-1].json["type"] == "package.ready"
    assert secret not in page.content()
    assert browser_console_errors == []


@pytest.mark.browser
def test_a_slack_channel_is_added_tested_and_told_of_a_package_its_url_never_shown(
    world, live_server, browser_page, browser_console_errors, receiver: Receiver, start_worker
):
    page = browser_page
    slack_url = f"{receiver.url}/services/T0/B0/slack-secret-part"
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/destinations")

    page.get_by_label("Slack channel (an incoming webhook)").check()
    assert page.locator("#url").is_hidden()
    page.get_by_label("Name", exact=True).fill("#exports")
    page.locator("#slack_url").fill(slack_url)
    page.get_by_role("button", name="Add destination").click()
    page.wait_for_url(re.compile(r"/export/destinations/\d+$"))
    assert "slack-secret-part" not in page.content()

    htmx_swap(page, lambda: page.get_by_role("button", name="Test connection").click())
    page.locator("#test-result", has_text="Slack accepted a test message").wait_for()
    assert [message.path for message in receiver.received] == ["/services/T0/B0/slack-secret-part"]

    _announce_fail_and_retry(page, live_server, world, receiver, start_worker)
    assert "Open the package" in receiver.received[-1].json["text"]
    assert "slack-secret-part" not in page.content()
    assert browser_console_errors == []
