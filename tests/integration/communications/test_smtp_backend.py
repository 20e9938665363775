"""Mail through a real SMTP server (aiosmtpd in this process): what arrives, and what a refusal means."""

from __future__ import annotations

import dataclasses
import logging
import socket
import threading
from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest

from app.communications import (
    Link,
    Mailer,
    MailRefused,
    MailTemporarilyUnavailable,
    OutgoingMessage,
    Recipient,
    message_id_for,
)
from app.seed_data import HOSTILE_VALUES
from tests.fixtures.smtp import free_port

CREATED = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

DOWNLOAD = "https://rhythm.test/d/s1gned-t0ken?format=csv&v=2"
UNSUBSCRIBE = "https://rhythm.test/unsubscribe/0ther-t0ken"


def _message(row_id: int = 1, **overrides) -> OutgoingMessage:
    values = {
        "to": Recipient("ada@example.com", "山田 太郎"),
        "subject": "Weekly hours — 12 rows",
        "message_id": message_id_for("schedule-delivery", row_id, CREATED, "rhythm.test"),
        "heading": "Weekly hours",
        "paragraphs": ["The file of your schedule is ready."],
        "facts": [("Rows", "12"), ("Size", "1.2 KB")],
        "link": Link("Download the file", DOWNLOAD),
        "unsubscribe_url": UNSUBSCRIBE,
    }
    values.update(overrides)
    return OutgoingMessage(**values)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.hrefs += [value for name, value in attrs if name == "href"]


def _links(html: str) -> _Links:
    parser = _Links()
    parser.feed(html)
    return parser


def test_a_sent_message_arrives_with_its_envelope_headers_and_both_parts(smtp_server, smtp_settings):
    """The server receives one message for the recipient, from the sender, with subject, Message-ID and parts."""
    Mailer(smtp_settings).send(_message(row_id=41))
    (arrived,) = smtp_server.messages
    assert (arrived.mail_from, arrived.recipients) == ("exports@rhythm.test", ["ada@example.com"])
    message = arrived.message
    assert message["Subject"] == "Weekly hours — 12 rows"
    assert message["From"] == "Rhythm Exports <exports@rhythm.test>"
    assert message["To"].addresses[0].display_name == "山田 太郎"
    assert message["Message-ID"] == "<schedule-delivery.41.20261130090000000000@rhythm.test>"
    assert "The file of your schedule is ready." in arrived.part("text/plain")
    assert "The file of your schedule is ready." in arrived.part("text/html")


def test_the_download_and_unsubscribe_links_arrive_in_both_parts_and_the_headers(smtp_server, smtp_settings):
    """The download link and the one-click unsubscribe (RFC 8058) arrive intact."""
    Mailer(smtp_settings).send(_message())
    (arrived,) = smtp_server.messages
    assert arrived.message["List-Unsubscribe"] == f"<{UNSUBSCRIBE}>"
    assert arrived.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert _links(arrived.part("text/html")).hrefs == [DOWNLOAD, UNSUBSCRIBE]
    text = arrived.part("text/plain")
    assert DOWNLOAD in text and UNSUBSCRIBE in text


def test_the_submission_id_is_the_queue_id_the_server_answered(smtp_server, smtp_settings):
    """`250 2.0.0 Ok: queued as Q…` gives the submission id the caller records."""
    submission_id = Mailer(smtp_settings).send(_message())
    (arrived,) = smtp_server.messages
    assert submission_id == arrived.queue_id


def test_without_a_queue_id_in_the_answer_the_submission_id_is_the_message_id(smtp_server, smtp_settings):
    smtp_server.announces_queue_id = False
    assert Mailer(smtp_settings).send(_message(row_id=9)) == "<schedule-delivery.9.20261130090000000000@rhythm.test>"


def test_hostile_values_arrive_as_text(smtp_server, smtp_settings):
    """Every hostile value, as a fact, arrives over the wire escaped in HTML and as typed in plain text."""
    facts = [(f"v{i}", value) for i, value in enumerate(HOSTILE_VALUES) if value.isprintable()]
    Mailer(smtp_settings).send(_message(facts=facts, subject="{{ 7*7 }} <img src=x> 山田 محمد"))
    (arrived,) = smtp_server.messages
    text, html = arrived.part("text/plain"), arrived.part("text/html")
    assert arrived.message["Subject"] == "{{ 7*7 }} <img src=x> 山田 محمد"
    assert _links(html).tags.isdisjoint({"img", "b", "i", "pdf:nextpage"})
    for label, value in facts:
        assert f"{label}: {value}" in text


@pytest.mark.parametrize("code", [421, 451, 452])
@pytest.mark.parametrize("at", ["MAIL", "RCPT", "DATA"])
def test_a_4xx_answer_is_temporary_and_nothing_arrives(smtp_server, smtp_settings, code, at):
    """A 4xx at any step means try again later; the server has no message."""
    smtp_server.refuse(1, code, "4.3.0 Busy, try again", at=at)
    with pytest.raises(MailTemporarilyUnavailable) as raised:
        Mailer(smtp_settings).send(_message())
    assert str(code) in raised.value.summary
    assert smtp_server.messages == []


@pytest.mark.parametrize("at", ["MAIL", "RCPT", "DATA"])
def test_a_5xx_answer_is_a_refusal(smtp_server, smtp_settings, at):
    """A 5xx at any step means the message will not be accepted: MailRefused with the server's words."""
    smtp_server.refuse(1, 554, "5.7.1 Message rejected as spam", at=at)
    with pytest.raises(MailRefused) as raised:
        Mailer(smtp_settings).send(_message())
    assert "554 5.7.1 Message rejected as spam" in raised.value.summary
    assert smtp_server.messages == []


def test_an_unknown_recipient_is_refused_and_named(smtp_server, smtp_settings):
    """A 550 for the recipient is MailRefused whose summary names the address and the server's reason."""
    with pytest.raises(MailRefused) as raised:
        Mailer(smtp_settings).send(_message(to=Recipient("nobody@example.com")))
    assert "nobody@example.com" in raised.value.summary and "User unknown" in raised.value.summary


def test_a_refusing_server_is_retried_until_it_accepts_and_the_message_arrives_once(smtp_server, smtp_settings):
    """Two 451s, then acceptance: sending the same message again after each temporary failure gives one arrival."""
    smtp_server.refuse(2, 451, "4.7.1 Greylisted, try again", at="RCPT")
    mailer, message = Mailer(smtp_settings), _message(row_id=5)
    failures = 0
    while True:
        try:
            submission_id = mailer.send(message)
            break
        except MailTemporarilyUnavailable:
            failures += 1
            assert failures <= 2
    assert (failures, smtp_server.attempts) == (2, 3)
    (arrived,) = smtp_server.messages
    assert (arrived.queue_id, arrived.message["Message-ID"]) == (
        submission_id,
        "<schedule-delivery.5.20261130090000000000@rhythm.test>",
    )


def test_a_closed_port_is_temporary(smtp_settings):
    """Nothing listening: MailTemporarilyUnavailable naming the server."""
    closed = dataclasses.replace(smtp_settings, port=free_port())
    with pytest.raises(MailTemporarilyUnavailable) as raised:
        Mailer(closed).send(_message())
    assert f"127.0.0.1:{closed.port}" in raised.value.summary


@pytest.mark.parametrize(("greeting", "expected"), [(421, MailTemporarilyUnavailable), (554, MailRefused)])
def test_a_server_that_refuses_at_its_greeting_is_classified_by_the_code(smtp_settings, greeting, expected):
    """A greeting of 421 (too busy) is temporary, 554 (no service for you) a refusal."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)

        def greet_and_close():
            connection, _ = listener.accept()
            with connection:
                connection.sendall(f"{greeting} rhythm.test Service not available\r\n".encode())

        greeter = threading.Thread(target=greet_and_close)
        greeter.start()
        settings = dataclasses.replace(smtp_settings, port=listener.getsockname()[1])
        with pytest.raises(expected, match=f"{greeting} rhythm.test Service not available"):
            Mailer(settings).send(_message())
        greeter.join()


def test_a_server_that_never_answers_times_out_as_temporary(smtp_settings):
    """A connection that is accepted but never greeted ends at MAIL_TIMEOUT as MailTemporarilyUnavailable."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        settings = dataclasses.replace(smtp_settings, port=silent.getsockname()[1], timeout_seconds=0.5)
        with pytest.raises(MailTemporarilyUnavailable, match="did not answer in time"):
            Mailer(settings).send(_message())


def test_a_login_from_the_settings_is_used(smtp_server, smtp_settings):
    """A server that requires AUTH accepts the message when the settings carry the right login."""
    smtp_server.require_login("exports", "right-password")
    settings = dataclasses.replace(smtp_settings, username="exports", password="right-password")
    Mailer(settings).send(_message())
    assert len(smtp_server.messages) == 1


def test_a_wrong_password_is_refused_and_never_shown_or_logged(smtp_server, smtp_settings, caplog):
    """535 from the server is MailRefused; neither its summary nor the log holds the password."""
    smtp_server.require_login("exports", "right-password")
    settings = dataclasses.replace(smtp_settings, username="exports", password="wr0ng-s3cret")
    caplog.set_level(logging.DEBUG)
    with pytest.raises(MailRefused) as raised:
        Mailer(settings).send(_message())
    assert "535" in raised.value.summary
    assert "wr0ng-s3cret" not in str(raised.value) and "wr0ng-s3cret" not in repr(raised.value)
    assert "wr0ng-s3cret" not in caplog.text
    assert smtp_server.messages == []


def test_a_summary_is_one_bounded_line(smtp_server, smtp_settings):
    """However long the server's answer, the summary is one line of at most 300 characters."""
    smtp_server.refuse(1, 554, "5.0.0 " + "x" * 2000, at="DATA")
    with pytest.raises(MailRefused) as raised:
        Mailer(smtp_settings).send(_message())
    assert len(raised.value.summary) <= 300 and "\n" not in raised.value.summary
