"""What a webhook and a Slack channel receive: the signature a receiver checks, and messages that
carry a file's facts and link, never its rows."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import time
from datetime import UTC, datetime
from pathlib import Path

from app.destinations import slack, webhook
from app.destinations.base import FileReady

READY = FileReady(
    message_id="run-41-destination-7",
    schedule_name="Weekly <hours> & overtime",
    schedule_slug="weekly-hours",
    run_id=41,
    occurrence=datetime(2026, 12, 7, 6, 0, tzinfo=UTC),
    file_name="weekly-hours.csv",
    format="csv",
    rows=1234,
    size_bytes=5 * 1024 * 1024,
    sha256="a" * 64,
    download_url="https://rhythm.example.com/links/abc123",
    link_expires_at=datetime(2027, 1, 6, 6, 0, tzinfo=UTC),
)


def test_the_signature_is_the_hmac_sha256_of_the_timestamp_a_dot_and_the_body():
    body = b'{"id":"m1","type":"test"}'
    expected = hmac.new(b"whsec_known", b"1765087200." + body, hashlib.sha256).hexdigest()

    assert webhook.signature("whsec_known", 1765087200, body) == f"t=1765087200,v1={expected}"


def test_the_signature_matches_a_vector_computed_with_openssl():
    # printf '1700000000.{}' | openssl dgst -sha256 -hmac secret
    assert webhook.signature("secret", 1700000000, b"{}") == (
        "t=1700000000,v1=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163"
    )


def test_a_new_signing_secret_is_random_and_long():
    first, second = webhook.new_signing_secret(), webhook.new_signing_secret()

    assert first != second
    assert first.startswith("whsec_") and len(first) >= 40


def test_the_file_ready_message_names_the_schedule_run_file_and_link():
    message = webhook.file_ready_message(READY)

    assert message == {
        "id": "run-41-destination-7",
        "type": "file.ready",
        "schedule": {"name": "Weekly <hours> & overtime", "slug": "weekly-hours"},
        "run": {"id": 41, "occurrence": "2026-12-07T06:00:00Z"},
        "file": {
            "name": "weekly-hours.csv",
            "format": "csv",
            "rows": 1234,
            "size_bytes": 5 * 1024 * 1024,
            "sha256": "a" * 64,
        },
        "download": {"url": "https://rhythm.example.com/links/abc123", "expires_at": "2027-01-06T06:00:00Z"},
    }


def test_a_message_carries_no_field_beyond_the_file_s_facts():
    # FileReady holds no rows; a field added to it must be chosen for the message, not leak in.
    assert {field.name for field in dataclasses.fields(FileReady)} == {
        "message_id",
        "schedule_name",
        "schedule_slug",
        "run_id",
        "occurrence",
        "file_name",
        "format",
        "rows",
        "size_bytes",
        "sha256",
        "download_url",
        "link_expires_at",
    }
    encoded = webhook.encode(webhook.file_ready_message(READY))
    assert len(encoded) < 1000
    assert json.loads(encoded)["file"]["rows"] == 1234  # a count, never a list of rows


def test_the_body_signed_is_the_body_sent_compact_utf8():
    body = webhook.encode({"id": "m", "type": "test", "name": "Zoë"})

    assert body == '{"id":"m","type":"test","name":"Zoë"}'.encode()


def test_the_slack_message_says_which_file_its_rows_size_and_link():
    text = slack.file_ready_message(READY)["text"]

    assert "weekly-hours.csv" in text
    assert "1,234 rows" in text and "5.0 MB" in text
    assert "<https://rhythm.example.com/links/abc123|Download it>" in text
    assert "2027-01-06 06:00 UTC" in text


def test_the_slack_message_shows_the_schedule_s_name_as_written_not_as_markup():
    text = slack.file_ready_message(READY)["text"]

    assert "Weekly &lt;hours&gt; &amp; overtime" in text


def _documented_verify():
    """The receiver's check docs/schedules.md gives customers, as they would paste it."""
    text = (Path(__file__).parents[3] / "docs" / "schedules.md").read_text(encoding="utf-8")
    code = next(block for block in text.split("```python\n")[1:] if "def verify" in block).split("```", 1)[0]
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 - the documentation's own example, run as a receiver runs it
    return namespace["verify"]


def test_the_documented_check_accepts_a_message_rhythm_signed_just_now():
    verify = _documented_verify()
    body = webhook.encode(webhook.file_ready_message(READY))

    assert verify("whsec_known", webhook.signature("whsec_known", int(time.time()), body), body)


def test_the_documented_check_refuses_another_secret_an_altered_body_and_a_stale_time():
    verify = _documented_verify()
    body = webhook.encode(webhook.file_ready_message(READY))
    now = int(time.time())

    assert not verify("whsec_other", webhook.signature("whsec_known", now, body), body)
    assert not verify("whsec_known", webhook.signature("whsec_known", now, body), body.replace(b"1234", b"9999"))
    assert not verify("whsec_known", webhook.signature("whsec_known", now - 301, body), body)
    assert not verify("whsec_known", "v1=abc", body)
