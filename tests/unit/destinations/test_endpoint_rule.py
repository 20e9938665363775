"""The endpoint rule: which addresses a customer's S3 endpoint may lead to."""

from __future__ import annotations

import ipaddress

import pytest

from app.destinations import DestinationRefused, refuse_internal_endpoint
from app.destinations.endpoint_rule import parse_allowed_hosts, refused_reason


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("64:ff9b::7f00:1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("10.0.0.5", "private"),
        ("172.16.3.4", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("::ffff:10.1.2.3", "private"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "not on the public internet"),
    ],
)
def test_internal_addresses_are_refused_naming_their_kind(address, kind):
    reason = refused_reason(ipaddress.ip_address(address))
    assert reason is not None and kind in reason


@pytest.mark.parametrize("address", ["93.184.216.34", "52.95.110.1", "2600:1f18::1", "::ffff:93.184.216.34"])
def test_public_addresses_pass(address):
    assert refused_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    "endpoint",
    ["http://127.0.0.1:6379", "http://localhost:5432", "http://[::1]:9000", "http://169.254.169.254", "http://0x7f.1"],
)
def test_an_endpoint_on_the_servers_own_network_is_refused_with_a_sentence(endpoint):
    with pytest.raises(DestinationRefused) as refused:
        refuse_internal_endpoint(endpoint, frozenset())
    assert refused.value.code == "endpoint_refused"
    assert "DESTINATION_ALLOWED_HOSTS" in str(refused.value)


@pytest.mark.parametrize("endpoint", ["http://minio.localhost:5127", "https://a.b.LOCALHOST.", "http://localhost"])
def test_a_localhost_name_is_refused_as_loopback_however_the_resolver_answers(endpoint):
    """RFC 6761: localhost and every name under it are loopback, though a resolver may not know them."""
    with pytest.raises(DestinationRefused, match="loopback"):
        refuse_internal_endpoint(endpoint, frozenset())


def test_a_host_the_operator_allows_passes_by_name_or_address():
    allowed = parse_allowed_hosts(" MinIO.internal , 127.0.0.1,[::1]")
    assert allowed == frozenset({"minio.internal", "127.0.0.1", "::1"})
    refuse_internal_endpoint("http://127.0.0.1:9000", allowed)
    refuse_internal_endpoint("http://[::1]:9000", allowed)
    refuse_internal_endpoint("http://localhost:9000", allowed)  # resolves to an allowed address
    refuse_internal_endpoint("http://minio.localhost:9000", allowed)  # so does every name under localhost


def test_no_endpoint_is_aws_itself_and_passes():
    refuse_internal_endpoint(None, frozenset())
