"""MAIL_URL and its companions are parsed once, at start; a bad value stops the start with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.communications import parse_mail_settings
from app.communications.settings import Security
from tests.fixtures.apps import settings_for

SENDER = "Rhythm Exports <exports@rhythm.test>"


def test_a_file_url_names_the_outbox_folder():
    """`file:///path` sends to `.eml` files in that folder."""
    settings = parse_mail_settings("file:///var/mail/outbox", SENDER)
    assert (settings.outbox, settings.host) == (Path("/var/mail/outbox"), None)


@pytest.mark.parametrize(
    ("url", "security", "port"),
    [
        ("smtp://mail.example.com", Security.PLAIN, 25),
        ("smtp://mail.example.com:2525", Security.PLAIN, 2525),
        ("smtp+starttls://mail.example.com", Security.STARTTLS, 587),
        ("smtp://mail.example.com:587?starttls=1", Security.STARTTLS, 587),
        ("smtp://mail.example.com?starttls=0", Security.PLAIN, 25),
        ("smtps://mail.example.com", Security.TLS, 465),
    ],
)
def test_the_scheme_and_option_choose_plain_starttls_or_tls_and_the_default_port(url, security, port):
    """Each URL form picks its security and, without a port, the usual one for it."""
    settings = parse_mail_settings(url, SENDER)
    assert (settings.host, settings.security, settings.port) == ("mail.example.com", security, port)


def test_a_login_in_the_url_is_percent_decoded_and_wins_over_thesettings_for():
    """`user:password@` in the URL is used (decoded) even when MAIL_USERNAME/MAIL_PASSWORD are set."""
    settings = parse_mail_settings("smtps://ex%40ports:p%3Ass%2Fw@mail.example.com", SENDER, "other", "secret")
    assert (settings.username, settings.password) == ("ex@ports", "p:ss/w")


def test_without_a_login_in_the_url_the_settings_login_is_used():
    settings = parse_mail_settings("smtps://mail.example.com", SENDER, "exports", "secret")
    assert (settings.username, settings.password) == ("exports", "secret")


def test_the_password_never_appears_in_the_settings_repr():
    """Settings may be logged; the password (and the URL holding it) stay out of repr()."""
    settings = parse_mail_settings("smtps://u:hunter2secret@mail.example.com", SENDER)
    assert "hunter2secret" not in repr(settings)


@pytest.mark.parametrize(
    "url",
    [
        "http://mail.example.com",
        "smtp://",
        "smtp://mail.example.com:notaport",
        "smtp://mail.example.com?tls=1",
        "smtps://mail.example.com?starttls=1",
        "smtp://mail.example.com?starttls=yes",
        "smtp://mail.example.com/path",
        "file://relative/outbox",
        "smtp://user@mail.example.com",
    ],
)
def test_an_unusable_mail_url_is_refused_with_a_reason(url):
    with pytest.raises(ValueError, match="MAIL_URL|login"):
        parse_mail_settings(url, SENDER)


def test_a_refused_url_does_not_quote_its_password():
    """The error for a bad URL names what is wrong, never the password it holds."""
    with pytest.raises(ValueError) as raised:
        parse_mail_settings("smtp://user:hunter2secret@mail.example.com?bad=1", SENDER)
    assert "hunter2secret" not in str(raised.value)


@pytest.mark.parametrize("sender", ["", "not an address", "Rhythm <exports@>", "Rhythm <exports@x>\r\nBcc: a@b.c"])
def test_an_unusable_mail_from_is_refused(sender):
    with pytest.raises(ValueError, match="MAIL_FROM"):
        parse_mail_settings("smtp://mail.example.com", sender)


def test_the_loaded_settings_never_show_the_smtp_password(tmp_path):
    """Neither a password in MAIL_URL nor MAIL_PASSWORD appears in the repr of the app's settings."""
    shown = repr(
        settings_for(
            tmp_path,
            MAIL_URL="smtps://exports:url-s3cret@mail.example.com",
            MAIL_PASSWORD="env-s3cret",
            MAIL_USERNAME="exports",
        )
    )
    assert "url-s3cret" not in shown and "env-s3cret" not in shown


def test_the_environment_gives_the_sender_login_and_timeout(tmp_path):
    """MAIL_FROM, MAIL_USERNAME, MAIL_PASSWORD and MAIL_TIMEOUT reach the parsed mail settings."""
    mail = settings_for(
        tmp_path,
        MAIL_URL="smtp+starttls://mail.example.com",
        MAIL_FROM="Exports <exports@example.com>",
        MAIL_USERNAME="exports",
        MAIL_PASSWORD="secret",
        MAIL_TIMEOUT="7.5",
    ).mail
    assert (str(mail.sender), mail.username, mail.password, mail.timeout_seconds) == (
        "Exports <exports@example.com>",
        "exports",
        "secret",
        7.5,
    )


def test_by_default_mail_goes_to_the_instance_outbox_from_localhost(tmp_path):
    mail = settings_for(tmp_path).mail
    assert (mail.outbox, str(mail.sender)) == (tmp_path / "outbox", "Rhythm Exports <exports@localhost>")


def test_a_bad_mail_url_stops_the_settings_from_loading(tmp_path):
    """A typo in MAIL_URL fails at start, not at the first message hours later."""
    with pytest.raises(ValueError, match="MAIL_URL"):
        settings_for(tmp_path, MAIL_URL="smtp:/mail.example.com")
