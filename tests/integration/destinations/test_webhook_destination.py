"""A webhook destination against a real HTTP receiver on the loopback that checks the signature as
a customer's would: Test connection, the file-ready message, and each failure's class in words."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest

from app import destinations
from app.destinations import DestinationRefused, classify_error, http_message
from app.destinations.base import FileReady
from app.models.package_delivery import FailureClass
from tests.fixtures.message_receiver import Receiver

SECRET = "whsec_receiver-knows-this"
READY = FileReady(
    message_id="run-12-destination-3",
    schedule_name="Daily shifts",
    schedule_slug="daily-shifts",
    run_id=12,
    occurrence=datetime(2026, 12, 7, 6, 0, tzinfo=UTC),
    file_name="daily-shifts.csv",
    format="csv",
    rows=3,
    size_bytes=120,
    sha256="b" * 64,
    download_url="https://rhythm.example.com/links/token",
    link_expires_at=datetime(2027, 1, 6, 6, 0, tzinfo=UTC),
)


def _failure(destination):
    with pytest.raises(Exception) as failed:
        destinations.announce(destination, READY)
    return classify_error(failed.value)


def test_test_connection_sends_a_signed_test_message_the_receiver_verifies(
    world, receiver: Receiver, webhook_destination
):
    result = destinations.test_connection(webhook_destination(world.workspace, secret=SECRET))

    assert result.ok, result.message
    assert result.message == "The webhook answered HTTP 200 OK to a signed test message."
    [message] = receiver.received
    assert message.signature_valid is True
    assert message.json["type"] == "test"
    assert message.headers["Rhythm-Message-Id"] == message.json["id"]


def test_a_file_ready_message_is_posted_signed_as_json_to_the_url_s_path(
    world, receiver: Receiver, webhook_destination
):
    destinations.announce(webhook_destination(world.workspace, secret=SECRET, path="/in/rhythm?team=ops"), READY)

    [message] = receiver.received
    assert message.path == "/in/rhythm?team=ops"
    assert message.signature_valid is True
    assert message.headers["Content-Type"] == "application/json"
    assert message.headers["Rhythm-Message-Id"] == "run-12-destination-3"
    assert message.json["type"] == "file.ready"
    assert message.json["file"] == {
        "name": "daily-shifts.csv",
        "format": "csv",
        "rows": 3,
        "size_bytes": 120,
        "sha256": "b" * 64,
    }
    assert message.json["download"]["url"] == "https://rhythm.example.com/links/token"


def test_a_retry_sends_the_same_message_id(world, receiver: Receiver, webhook_destination):
    destination = webhook_destination(world.workspace, secret=SECRET)
    receiver.status = 503
    _failure(destination)
    receiver.status = 200

    destinations.announce(destination, READY)

    assert [m.headers["Rhythm-Message-Id"] for m in receiver.received] == ["run-12-destination-3"] * 2
    assert [m.json["id"] for m in receiver.received] == ["run-12-destination-3"] * 2


def test_a_receiver_holding_another_secret_fails_the_signature(world, receiver: Receiver, webhook_destination):
    destination = webhook_destination(world.workspace, secret=SECRET)
    receiver.secret = "whsec_an-old-secret"
    receiver.status = 401

    failure = _failure(destination)

    assert receiver.received[0].signature_valid is False
    assert failure.failure_class == FailureClass.PERMANENT
    assert "signing secret" in failure.summary
    assert SECRET not in failure.summary


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_a_server_error_or_busy_answer_is_transient(world, receiver: Receiver, webhook_destination, status):
    receiver.status = status

    failure = _failure(webhook_destination(world.workspace))

    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT, f"http_{status}")
    assert failure.summary.startswith(f"The webhook answered HTTP {status} ")


def test_gone_is_permanent_in_words(world, receiver: Receiver, webhook_destination):
    receiver.status = 410

    failure = _failure(webhook_destination(world.workspace))

    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "http_410")
    assert failure.summary == (
        "The webhook answered HTTP 410 Gone: the receiver says it is gone for good: check the URL, "
        "or remove this destination."
    )


def test_a_receiver_slower_than_the_read_timeout_is_transient(
    world, receiver: Receiver, webhook_destination, monkeypatch
):
    monkeypatch.setattr(http_message, "READ_TIMEOUT_SECONDS", 0.5)
    receiver.delay_seconds = 2

    failure = _failure(webhook_destination(world.workspace))

    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT, "timeout")
    assert "did not answer within" in failure.summary


def test_only_the_status_is_read_never_the_receiver_s_body(world, receiver: Receiver, webhook_destination, monkeypatch):
    monkeypatch.setattr(http_message, "READ_TIMEOUT_SECONDS", 1)
    receiver.stalled_body_seconds = 3

    destinations.announce(webhook_destination(world.workspace), READY)

    assert len(receiver.received) == 1


def test_a_redirect_is_not_followed_and_is_permanent(world, receiver: Receiver, webhook_destination):
    receiver.status = 302
    receiver.headers = {"Location": f"{receiver.url}/elsewhere-internal"}

    failure = _failure(webhook_destination(world.workspace))

    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "redirect")
    assert "redirect" in failure.summary and "not followed" in failure.summary
    assert "elsewhere-internal" not in failure.summary
    assert [m.path for m in receiver.received] == ["/hooks/rhythm"]


def test_nothing_listening_is_transient(world, webhook_destination, free_port):
    destination = webhook_destination(world.workspace, url=f"http://127.0.0.1:{free_port}/hook")

    failure = _failure(destination)

    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT, "connection_refused")


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "localhost", "[::1]", "169.254.169.254", "10.0.0.5", "192.168.1.1", "0.0.0.0", "[fd00::1]"],
)
def test_an_address_on_the_server_s_own_network_is_refused_at_connect(
    world, receiver: Receiver, webhook_destination, endpoint_rule_closed, host
):
    port = receiver.url.rsplit(":", 1)[1]
    destination = webhook_destination(world.workspace, url=f"https://{host}:{port}/hook")

    failure = _failure(destination)
    probe = destinations.test_connection(destination)

    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "endpoint_refused")
    assert "DESTINATION_ALLOWED_HOSTS" in failure.summary
    assert not probe.ok and "DESTINATION_ALLOWED_HOSTS" in probe.message
    assert receiver.received == []


def test_a_name_that_rebinds_to_loopback_after_the_check_is_refused_at_connection_time(
    world, receiver: Receiver, webhook_destination, endpoint_rule_closed, monkeypatch
):
    real_getaddrinfo = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.example.com":
            return real_getaddrinfo(host, port, *args, **kwargs)
        lookups.append(host)
        address = "93.184.216.34" if len(lookups) == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    port = receiver.url.rsplit(":", 1)[1]
    destination = webhook_destination(world.workspace, url=f"https://rebind.example.com:{port}/hook")

    with pytest.raises(DestinationRefused) as refused:
        destinations.announce(destination, READY)

    assert len(lookups) >= 2
    assert refused.value.code == "endpoint_refused"
    assert receiver.received == []


def test_plain_http_to_a_host_the_operator_does_not_allow_is_refused(
    world, receiver: Receiver, webhook_destination, endpoint_rule_closed
):
    failure = _failure(webhook_destination(world.workspace))

    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "invalid_url")
    assert "https://" in failure.summary
    assert receiver.received == []
