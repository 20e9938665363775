"""Test connection and deliveries reach no address on the server's own network, follow no
redirect, and show a store's error code with a sentence of ours, never what the endpoint sent."""

from __future__ import annotations

import socket

import pytest

from app import destinations
from app.destinations import classify_error, open_destination
from app.models.package_delivery import FailureClass
from tests.fixtures.destinations import FakeEndpoint

INTERNAL_TEXT = "internal-service-banner-9f3c"


def _refused_for_loopback(message: str) -> bool:
    return "loopback" in message and "DESTINATION_ALLOWED_HOSTS" in message


def test_probe_of_a_loopback_endpoint_is_refused_before_any_request(
    world, s3_destination, endpoint_rule_closed, fake_endpoint: FakeEndpoint
):
    destination = s3_destination(world.workspace, endpoint_url=fake_endpoint.url)

    result = destinations.test_connection(destination)

    assert not result.ok
    assert _refused_for_loopback(result.message), result.message
    assert fake_endpoint.requests == []


def test_probe_of_the_metadata_service_address_is_refused(world, s3_destination, endpoint_rule_closed):
    destination = s3_destination(world.workspace, endpoint_url="http://169.254.169.254")

    result = destinations.test_connection(destination)

    assert not result.ok and "link-local" in result.message


def test_a_name_that_rebinds_to_loopback_after_the_check_is_refused_at_connection_time(
    world, s3_destination, endpoint_rule_closed, fake_endpoint: FakeEndpoint, monkeypatch
):
    # The first lookup (the check before the store opens) says public, every later one loopback.
    real_getaddrinfo = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.example.com":
            return real_getaddrinfo(host, port, *args, **kwargs)
        lookups.append(host)
        address = "93.184.216.34" if len(lookups) == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    port = fake_endpoint.url.rsplit(":", 1)[1]
    destination = s3_destination(world.workspace, endpoint_url=f"http://rebind.example.com:{port}")

    result = destinations.test_connection(destination)

    assert len(lookups) >= 2  # checked before opening, and again when connecting
    assert not result.ok
    assert _refused_for_loopback(result.message), result.message
    assert fake_endpoint.requests == []


def test_a_delivery_to_a_loopback_endpoint_fails_permanently_with_the_rule_s_sentence(
    world, s3_destination, endpoint_rule_closed, fake_endpoint: FakeEndpoint
):
    destination = s3_destination(world.workspace, endpoint_url=fake_endpoint.url)
    try:
        open_destination(destination).put_bytes("package.zip", b"data")
    except Exception as exc:
        failure = classify_error(exc)
    else:
        raise AssertionError("the delivery reached a loopback endpoint")

    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "endpoint_refused")
    assert _refused_for_loopback(failure.summary)
    assert fake_endpoint.requests == []


def test_a_redirecting_endpoint_is_not_followed_and_the_probe_stays_bounded(
    world, s3_destination, fake_endpoint: FakeEndpoint
):
    fake_endpoint.status = 307
    fake_endpoint.headers = {"Location": f"{fake_endpoint.url}/elsewhere"}
    destination = s3_destination(world.workspace, endpoint_url=fake_endpoint.url)

    result = destinations.test_connection(destination)

    assert not result.ok
    assert result.message.startswith("HTTP 307: ") and "redirect" in result.message, result.message
    assert "Error" not in result.message  # no exception class such as RecursionError
    assert len(fake_endpoint.requests) <= 2
    assert not any(path.endswith("/elsewhere") for path in fake_endpoint.requests)


def test_what_an_endpoint_answers_is_not_repeated_beyond_its_error_code(
    world, s3_destination, fake_endpoint: FakeEndpoint
):
    fake_endpoint.status = 403
    fake_endpoint.headers = {"Content-Type": "application/xml"}
    fake_endpoint.body = f"<Error><Code>AccessDenied</Code><Message>{INTERNAL_TEXT}</Message></Error>".encode()
    destination = s3_destination(world.workspace, endpoint_url=fake_endpoint.url)

    result = destinations.test_connection(destination)

    assert result.message.startswith("AccessDenied: these credentials may not")
    assert INTERNAL_TEXT not in result.message


def test_an_error_code_that_is_not_a_code_is_not_repeated(world, s3_destination, fake_endpoint: FakeEndpoint):
    fake_endpoint.status = 404
    fake_endpoint.headers = {"Content-Type": "application/xml"}
    fake_endpoint.body = f"<Error><Code>{INTERNAL_TEXT} says hello</Code></Error>".encode()
    destination = s3_destination(world.workspace, endpoint_url=fake_endpoint.url)

    result = destinations.test_connection(destination)

    assert result.message.startswith("HTTP 404: "), result.message
    assert INTERNAL_TEXT not in result.message


def test_a_non_s3_service_s_page_is_not_repeated(world, s3_destination, fake_endpoint: FakeEndpoint):
    fake_endpoint.status = 200
    fake_endpoint.headers = {"Content-Type": "text/html"}
    fake_endpoint.body = f"<html><body>{INTERNAL_TEXT}</body></html>".encode()
    destination = s3_destination(world.workspace, endpoint_url=fake_endpoint.url)

    result = destinations.test_connection(destination)

    assert INTERNAL_TEXT not in result.message


@pytest.mark.environment(DESTINATION_ALLOWED_HOSTS="127.0.0.1,::1")
def test_a_host_allowed_by_its_addresses_is_reached_through_an_address_it_checked(
    world, s3_destination, fake_endpoint: FakeEndpoint
):
    # "localhost" is not listed by name: each address it resolves to is checked, and listed.
    fake_endpoint.status = 404
    fake_endpoint.headers = {"Content-Type": "application/xml"}
    fake_endpoint.body = b"<Error><Code>NoSuchBucket</Code><Message>No such bucket</Message></Error>"
    port = fake_endpoint.url.rsplit(":", 1)[1]
    destination = s3_destination(world.workspace, endpoint_url=f"http://localhost:{port}")

    result = destinations.test_connection(destination)

    assert result.message.startswith("NoSuchBucket: no bucket of this name exists"), result.message
    assert fake_endpoint.requests
