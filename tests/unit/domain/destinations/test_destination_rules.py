"""The destination path and endpoint checks the forms and the stores share."""

from __future__ import annotations

import pytest

from app.domain.destinations.destination_rules import (
    validate_destination_path,
    validate_endpoint_url,
    validate_message_url,
)
from app.domain.errors import ValidationError
from tests.factories import hostile_values


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", ""),
        ("  ", ""),
        ("exports", "exports"),
        ("exports/rhythm/", "exports/rhythm"),
        ("Données 2026", "Données 2026"),
    ],
)
def test_plain_relative_paths_are_accepted_and_normalised(raw, expected):
    assert validate_destination_path(raw) == expected


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/etc/cron.d", "relative"),
        ("../outside", "“..”"),
        ("a/../b", "“..”"),
        ("a/./b", "“..”"),
        ("a//b", "empty"),
        ("a\\..\\b", "“/”"),
        ("a\nb", "U+000A"),
        ("a\x00b", "U+0000"),
        ("evil\u202egnp.exe", "U+202E"),
        ("x" * 501, "too long"),
    ],
)
def test_hostile_paths_are_refused_with_a_sentence_saying_why(path, says):
    with pytest.raises(ValidationError) as refused:
        validate_destination_path(path)
    assert says in str(refused.value)
    assert refused.value.field == "path"


def test_every_hostile_value_is_either_refused_or_kept_exactly():
    for value in hostile_values():
        try:
            accepted = validate_destination_path(value)
        except ValidationError:
            continue
        assert accepted == value.strip().removesuffix("/")
        assert not accepted.startswith("/") and ".." not in accepted.split("/")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", None),
        ("https://s3.eu-west-1.amazonaws.com", "https://s3.eu-west-1.amazonaws.com"),
        ("http://127.0.0.1:9000/", "http://127.0.0.1:9000"),
        (" https://minio.example.org ", "https://minio.example.org"),
    ],
)
def test_server_addresses_are_accepted(raw, expected):
    assert validate_endpoint_url(raw) == expected


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://example.org", "https://"),
        ("file:///etc/passwd", "https://"),
        ("javascript:alert(1)", "https://"),
        ("example.org", "https://"),
        ("https://user:pass@example.org", "user name or password"),
        ("https://key@example.org", "user name or password"),
        ("https://example.org/?x=1", "query"),
        ("https://example.org/#top", "fragment"),
        ("https://example.org/bucket", "server's address only"),
        ("https://example.org:99999", "valid URL"),
        ("https://", "name a server"),
        ("https://exa mple.org", "spaces"),
        ("https://example.org\r\nX: y", "spaces"),
        ("http://127%2e0%2e0%2e1:5127", "without %-escapes"),
        ("https://exa%6dple.org", "without %-escapes"),
        ("https://[::1%25eth0]:9000", "without %-escapes"),
    ],
)
def test_hostile_endpoints_are_refused_with_a_sentence_saying_why(url, says):
    with pytest.raises(ValidationError) as refused:
        validate_endpoint_url(url)
    assert says in str(refused.value)
    assert refused.value.field == "endpoint_url"


WEBHOOK = "The webhook's URL"


@pytest.mark.parametrize(
    "url",
    ["https://hooks.example.com/rhythm", "https://hooks.example.com:8443/in?source=rhythm", "https://example.com"],
)
def test_a_message_url_over_https_with_a_path_and_query_is_kept_as_typed(url):
    assert validate_message_url(f"  {url} ", "url", WEBHOOK, frozenset()) == url


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("", "Enter the webhook's URL"),
        ("http://hooks.example.com/rhythm", "must start with https://"),
        ("ftp://hooks.example.com/rhythm", "must start with https://"),
        ("https://user:pass@hooks.example.com/", "user name or password"),
        ("https://hooks.example.com/#part", "fragment"),
        ("https://hooks%2eexample.com/", "%-escapes"),
        ("https://hooks.example.com/a b", "spaces"),
        ("https://", "must name a server"),
        ("https://" + "a" * 1000 + ".com/", "too long"),
    ],
)
def test_a_message_url_that_is_not_plain_https_is_refused_with_a_sentence(url, words):
    with pytest.raises(ValidationError) as refused:
        validate_message_url(url, "url", WEBHOOK, frozenset())

    assert words in str(refused.value)
    assert refused.value.field == "url"


def test_plain_http_is_allowed_only_to_a_host_the_operator_allows():
    assert validate_message_url("http://127.0.0.1:8080/hook", "url", WEBHOOK, frozenset({"127.0.0.1"}))
    with pytest.raises(ValidationError):
        validate_message_url("http://10.0.0.1:8080/hook", "url", WEBHOOK, frozenset({"127.0.0.1"}))
