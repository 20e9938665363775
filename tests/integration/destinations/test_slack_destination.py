"""A Slack destination against the loopback receiver standing in for Slack's incoming webhooks:
the test message, the file-ready message, Slack's refusals in words, and its URL, a secret, in
no message and no log line."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from app import destinations
from app.destinations import classify_error
from app.destinations.base import FileReady
from app.models.package_delivery import FailureClass
from app.observability.logs import configure_logging
from tests.fixtures.message_receiver import Receiver

SECRET_PART = "/services/T0/B0/slack-secret-part"
READY = FileReady(
    message_id="run-5-destination-2",
    schedule_name="Open time-off requests",
    schedule_slug="open-time-off",
    run_id=5,
    occurrence=datetime(2026, 12, 7, 6, 0, tzinfo=UTC),
    file_name="open-time-off.xlsx",
    format="xlsx",
    rows=1,
    size_bytes=2048,
    sha256="c" * 64,
    download_url="https://rhythm.example.com/links/slack-token",
    link_expires_at=datetime(2027, 1, 6, 6, 0, tzinfo=UTC),
)


def test_test_connection_posts_a_short_message_to_the_channel(world, receiver: Receiver, slack_destination):
    result = destinations.test_connection(slack_destination(world.workspace))

    assert result.ok, result.message
    assert result.message == "Slack accepted a test message (HTTP 200 OK); it shows in the channel."
    [message] = receiver.received
    assert message.path == SECRET_PART
    assert "connection test" in message.json["text"]


def test_a_file_ready_message_says_which_file_its_rows_size_and_link(world, receiver: Receiver, slack_destination):
    destinations.announce(slack_destination(world.workspace), READY)

    [message] = receiver.received
    assert message.headers["Content-Type"] == "application/json"
    assert set(message.json) == {"text"}
    text = message.json["text"]
    assert "open-time-off.xlsx" in text and "1 row," in text and "2.0 KB" in text
    assert "<https://rhythm.example.com/links/slack-token|Download it>" in text


@pytest.mark.parametrize(
    ("status", "words"),
    [(404, "Slack does not know this webhook"), (403, "revoked"), (410, "archived")],
)
def test_slack_s_refusals_are_permanent_in_words_without_the_url(
    world, receiver: Receiver, slack_destination, status, words
):
    receiver.status = status

    with pytest.raises(Exception) as failed:
        destinations.announce(slack_destination(world.workspace), READY)
    failure = classify_error(failed.value)

    assert failure.failure_class == FailureClass.PERMANENT
    assert words in failure.summary
    assert "slack-secret-part" not in failure.summary


def test_slack_busy_is_transient(world, receiver: Receiver, slack_destination):
    receiver.status = 503

    with pytest.raises(Exception) as failed:
        destinations.announce(slack_destination(world.workspace), READY)

    assert classify_error(failed.value).failure_class == FailureClass.TRANSIENT


def test_the_slack_url_is_in_no_log_line_of_a_process_logging_at_debug(
    world, receiver: Receiver, slack_destination, capsys
):
    receiver.status = 500
    destination = slack_destination(world.workspace)
    root, client_logger = logging.getLogger(), logging.getLogger("urllib3")
    saved = (root.handlers[:], root.level, client_logger.level)
    configure_logging("worker", logging.DEBUG)
    try:
        destinations.test_connection(destination)
        logging.getLogger("app.destinations").debug("debug lines are written")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        client_logger.setLevel(saved[2])

    written = capsys.readouterr().out
    assert receiver.received  # the message went out
    assert "debug lines are written" in written
    assert "slack-secret-part" not in written
