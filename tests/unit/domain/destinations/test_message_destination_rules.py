"""A webhook or Slack destination on the form: a URL and no path; a webhook's URL kept to show, a
Slack URL kept as the secret (required when added, an empty field keeps it on an edit)."""

from __future__ import annotations

import hashlib

import pytest

from app.domain.destinations.destination_input import DestinationInput, check_destination
from app.domain.errors import ValidationError

HOOK = "https://hooks.example.com/rhythm?team=ops"
SLACK = "https://hooks.slack.com/services/T0/B0/abcdef"


def message_input(**overrides) -> DestinationInput:
    values = {
        "name": "Receiver",
        "kind": "webhook",
        "bucket": "ignored-bucket",
        "region": "",
        "endpoint_url": "",
        "access_key_id": "",
        "secret": "typed-secret-ignored",
        "path": "ignored/path",
        "url": f" {HOOK} ",
        "slack_url": "",
    }
    return DestinationInput(**{**values, **overrides})


def _checked(data: DestinationInput, creating: bool = True):
    return check_destination(data, creating=creating, directory_root_configured=False)


def test_a_webhook_keeps_its_url_and_no_typed_secret_bucket_or_path():
    checked = _checked(message_input())

    assert (checked.kind, checked.url, checked.secret, checked.bucket, checked.path) == (
        "webhook",
        HOOK,
        None,
        None,
        "",
    )
    assert checked.connection_key == "webhook:" + hashlib.sha256(HOOK.encode()).hexdigest()


def test_a_slack_url_is_the_secret_and_its_key_holds_only_its_digest():
    checked = _checked(message_input(kind="slack", url="", slack_url=SLACK))

    assert (checked.secret, checked.url) == (SLACK, None)
    assert "abcdef" not in checked.connection_key
    assert checked.connection_key == "slack:" + hashlib.sha256(SLACK.encode()).hexdigest()


def test_a_slack_url_is_required_when_added_and_kept_by_an_empty_field_on_an_edit():
    with pytest.raises(ValidationError) as refused:
        _checked(message_input(kind="slack", slack_url=""))
    kept = _checked(message_input(kind="slack", slack_url=""), creating=False)

    assert refused.value.field == "slack_url"
    assert (kept.secret, kept.connection_key) == (None, "")


@pytest.mark.parametrize(("kind", "field"), [("webhook", "url"), ("slack", "slack_url")])
def test_plain_http_is_refused_unless_the_operator_allows_the_host(kind, field):
    data = message_input(kind=kind, url="http://10.1.2.3/in", slack_url="http://10.1.2.3/in")

    with pytest.raises(ValidationError, match="https://") as refused:
        _checked(data)
    hosts = frozenset({"10.1.2.3"})
    allowed = check_destination(data, creating=True, directory_root_configured=False, http_hosts=hosts)

    assert refused.value.field == field
    assert "http://10.1.2.3/in" in (allowed.url, allowed.secret)
