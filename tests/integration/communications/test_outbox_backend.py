"""The outbox folder backend (the embedded default): one whole `.eml` file per Message-ID."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from email import message_from_bytes, policy

import pytest

from app.communications import (
    Link,
    Mailer,
    MailTemporarilyUnavailable,
    OutgoingMessage,
    Recipient,
    get_mailer,
    message_id_for,
)
from app.communications.backends import outbox_file_name
from app.communications.settings import parse_mail_settings

CREATED = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

SENDER = "Rhythm Exports <exports@rhythm.test>"


def _message(row_id: int = 1, subject: str = "Your package is ready") -> OutgoingMessage:
    return OutgoingMessage(
        to=Recipient("admin@example.com", "محمد الأمين"),
        subject=subject,
        message_id=message_id_for("package-notice", row_id, CREATED, "rhythm.test"),
        heading="Workspace export ready",
        paragraphs=["Package 12 is available for 7 days."],
        link=Link("Open the package", "https://rhythm.test/w/1/packages/12"),
    )


@pytest.fixture
def outbox(tmp_path):
    return tmp_path / "outbox"


@pytest.fixture
def mailer(outbox):
    return Mailer(parse_mail_settings(outbox.as_uri(), SENDER))


def test_a_message_is_written_as_one_eml_file_named_for_its_message_id(mailer, outbox):
    """The file is the whole message: headers and both parts read back; the submission id is the Message-ID."""
    submission_id = mailer.send(_message(row_id=3))
    assert submission_id == "<package-notice.3.20261130090000000000@rhythm.test>"
    assert [path.name for path in outbox.iterdir()] == ["package-notice.3.20261130090000000000@rhythm.test.eml"]
    written = message_from_bytes(
        (outbox / "package-notice.3.20261130090000000000@rhythm.test.eml").read_bytes(), policy=policy.default
    )
    assert written["Message-ID"] == "<package-notice.3.20261130090000000000@rhythm.test>"
    assert written["To"].addresses[0].display_name == "محمد الأمين"
    assert "Package 12 is available" in written.get_body(("plain",)).get_content()
    assert "https://rhythm.test/w/1/packages/12" in written.get_body(("html",)).get_content()


def test_the_same_message_id_twice_leaves_one_file_the_first(mailer, outbox):
    """A message sent again (a retry after a crash) is not written twice; the first copy stays."""
    mailer.send(_message(row_id=4, subject="First"))
    mailer.send(_message(row_id=4, subject="Second"))
    (only,) = outbox.iterdir()
    assert message_from_bytes(only.read_bytes(), policy=policy.default)["Subject"] == "First"


def test_two_rows_give_two_files(mailer, outbox):
    mailer.send(_message(row_id=5))
    mailer.send(_message(row_id=6))
    assert sorted(path.name for path in outbox.iterdir()) == [
        "package-notice.5.20261130090000000000@rhythm.test.eml",
        "package-notice.6.20261130090000000000@rhythm.test.eml",
    ]


def test_a_write_that_fails_midway_leaves_no_file_behind(mailer, outbox, monkeypatch):
    """When the bytes cannot be made durable (a full disk), neither the message file nor a temporary remains."""

    def disk_full(descriptor):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(MailTemporarilyUnavailable, match="No space left on device"):
        mailer.send(_message(row_id=7))
    assert list(outbox.iterdir()) == []


def test_an_outbox_that_cannot_be_a_folder_is_temporarily_unavailable(tmp_path):
    """A MAIL_URL folder that is a file: MailTemporarilyUnavailable, not a crash."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    mailer = Mailer(parse_mail_settings(blocker.as_uri(), SENDER))
    with pytest.raises(MailTemporarilyUnavailable, match="outbox folder"):
        mailer.send(_message())


@pytest.mark.parametrize(
    ("first", "second"),
    [("<a/b@rhythm.test>", "<a_b@rhythm.test>"), ("<../x@rhythm.test>", "<.._x@rhythm.test>")],
)
def test_message_ids_with_unsafe_characters_get_distinct_safe_file_names(first, second):
    """Characters a file name cannot carry are replaced, with a digest so two ids never share a file."""
    names = {outbox_file_name(first), outbox_file_name(second)}
    assert len(names) == 2
    assert all("/" not in name and name.endswith(".eml") for name in names)


def test_the_app_mailer_writes_to_the_configured_outbox(app, test_environment):
    """`get_mailer()` follows MAIL_URL: in the tests, the outbox folder of the test environment."""
    with app.app_context():
        mailer = get_mailer()
        mailer.send(_message(row_id=8))
        outbox = mailer.settings.outbox
    assert outbox.as_uri() == test_environment["MAIL_URL"]
    assert (outbox / "package-notice.8.20261130090000000000@rhythm.test.eml").exists()


def test_a_long_unsubscribe_link_is_written_as_the_bare_url_mail_clients_read(mailer, outbox):
    """List-Unsubscribe must be `<url>` on the wire (RFC 2369/8058): never folded into encoded words."""
    url = "https://rhythm.test/u/" + "t0ken" * 40
    mailer.send(replace(_message(row_id=9), unsubscribe_url=url))
    raw = (outbox / "package-notice.9.20261130090000000000@rhythm.test.eml").read_bytes()
    assert f"List-Unsubscribe: <{url}>\r\n".encode() in raw
    assert b"List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n" in raw
