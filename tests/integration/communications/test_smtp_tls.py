"""SMTP over TLS: STARTTLS and TLS from the first byte, with a login, and what a TLS problem means."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.communications import (
    Mailer,
    MailRefused,
    MailTemporarilyUnavailable,
    OutgoingMessage,
    Recipient,
    message_id_for,
    parse_mail_settings,
)

CREATED = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

SENDER = "Rhythm Exports <exports@rhythm.test>"


def _message() -> OutgoingMessage:
    return OutgoingMessage(
        to=Recipient("ada@example.com"),
        subject="Weekly hours",
        message_id=message_id_for("schedule-delivery", 1, CREATED, "rhythm.test"),
        heading="Weekly hours",
    )


def test_a_message_arrives_over_tls_with_a_login_from_the_url(smtp_tls_server, trusted_smtp_certificate):
    """`smtp+starttls://` and `smtps://` with `user:password@` log in over TLS and deliver."""
    server, scheme = smtp_tls_server
    server.require_login("exports@rhythm.test", "p:ss/w0rd")
    settings = parse_mail_settings(
        f"{scheme}://exports%40rhythm.test:p%3Ass%2Fw0rd@{server.host}:{server.port}", SENDER
    )
    Mailer(settings).send(_message())
    (arrived,) = server.messages
    assert arrived.recipients == ["ada@example.com"]


def test_a_certificate_this_machine_does_not_trust_is_not_sent_to(smtp_tls_server):
    """Without trusting the server's certificate nothing is sent; the error says TLS failed."""
    server, scheme = smtp_tls_server
    settings = parse_mail_settings(f"{scheme}://{server.host}:{server.port}", SENDER, timeout_seconds=5)
    with pytest.raises(MailTemporarilyUnavailable, match="TLS .* failed.*CERTIFICATE_VERIFY_FAILED"):
        Mailer(settings).send(_message())
    assert server.messages == []


@pytest.mark.parametrize("smtp_tls_server", ["starttls"], indirect=True)
def test_plain_smtp_to_a_server_requiring_starttls_is_refused(smtp_tls_server):
    """`smtp://` where the server demands STARTTLS: its 530 is MailRefused, since retrying cannot help."""
    server, _ = smtp_tls_server
    settings = parse_mail_settings(f"smtp://{server.host}:{server.port}", SENDER, timeout_seconds=5)
    with pytest.raises(MailRefused, match="530"):
        Mailer(settings).send(_message())


def test_starttls_asked_of_a_server_without_it_is_refused(smtp_server):
    """STARTTLS in the settings and a server that does not offer it: MailRefused, and nothing is sent in clear."""
    settings = parse_mail_settings(f"smtp+starttls://{smtp_server.host}:{smtp_server.port}", SENDER)
    with pytest.raises(MailRefused, match="STARTTLS"):
        Mailer(settings).send(_message())
    assert smtp_server.messages == []
