"""Messages are built from values that may be hostile: every one arrives as text, never markup or headers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.headerregistry import Address
from html.parser import HTMLParser

import pytest

from app.communications import (
    InvalidAddress,
    Link,
    MailRefused,
    OutgoingMessage,
    Recipient,
    build_message,
    message_id_for,
)
from app.communications.messages import one_line
from app.seed_data import HOSTILE_VALUES

CREATED = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

SENDER = Address("Rhythm Exports", "exports", "rhythm.test")
TEMPLATE_TAGS = {"html", "head", "meta", "title", "body", "h1", "p", "br", "table", "tr", "th", "td", "a", "hr", "span"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.hrefs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.hrefs += [value for name, value in attrs if name == "href"]

    def handle_data(self, data):
        self.text.append(data)


def _parse_html(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _message(**overrides) -> OutgoingMessage:
    values = {
        "to": Recipient("ada@example.com", "Ada"),
        "subject": "Weekly hours",
        "message_id": message_id_for("schedule-delivery", 7, CREATED, "rhythm.test"),
        "heading": "Your file is ready",
        "paragraphs": ["Here it is."],
        "facts": [("Rows", "12")],
        "link": Link("Download the file", "https://rhythm.test/d/abc?x=1&y=2"),
    }
    values.update(overrides)
    return OutgoingMessage(**values)


def _round_trip(message: OutgoingMessage):
    return message_from_bytes(build_message(message, SENDER).as_bytes(), policy=policy.default)


def _parts(message: OutgoingMessage) -> tuple[str, str]:
    parsed = _round_trip(message)
    return parsed.get_body(("plain",)).get_content(), parsed.get_body(("html",)).get_content()


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_a_hostile_value_is_text_in_both_parts(value):
    """In heading, paragraph, fact, link label and footer the value is shown as text, never read as markup."""
    shown = one_line(value)
    text, html = _parts(
        _message(
            heading=value,
            paragraphs=[value],
            facts=[(value, value)],
            link=Link(value, "https://rhythm.test/d/x"),
            footer=value,
        )
    )
    page = _parse_html(html)
    assert page.tags <= TEMPLATE_TAGS
    assert shown.strip() in "".join(page.text)
    assert shown.strip() in text


def test_markup_in_a_value_is_escaped_in_html_and_literal_in_plain_text():
    """`<img src=…>` arrives as `&lt;img` in HTML (no image is loaded) and as typed in plain text."""
    value = '<img src="http://example.invalid/x.png">'
    text, html = _parts(_message(facts=[("Note", value)]))
    assert "&lt;img src=&#34;http://example.invalid/x.png&#34;&gt;" in html
    assert "img" not in _parse_html(html).tags
    assert f"Note: {value}" in text


def test_template_syntax_in_a_value_is_not_evaluated():
    """`{{ 7*7 }}` in a value stays as typed; 49 appears nowhere."""
    text, html = _parts(_message(heading="{{ 7*7 }}", paragraphs=["${7*7}"]))
    assert "{{ 7*7 }}" in text and "{{ 7*7 }}" in html
    assert "49" not in text and "49" not in html


def test_paragraph_line_breaks_become_lines_and_br():
    """A paragraph keeps its lines: separate lines in plain text, `<br>` between them in HTML."""
    text, html = _parts(_message(paragraphs=["line one\nline two"]))
    assert "line one\nline two\n" in text
    assert "line one<br>line two" in html


@pytest.mark.parametrize(
    "subject",
    ["Hours\r\nBcc: everyone@example.com", "Hours\nBcc: everyone@example.com", "Hours\rBcc: everyone@example.com"],
)
def test_a_line_break_in_the_subject_never_starts_a_header(subject):
    """CR and LF in a subject become spaces: the message has no Bcc header and one Subject."""
    parsed = _round_trip(_message(subject=subject))
    assert parsed["Bcc"] is None
    assert parsed.get_all("Subject") == ["Hours Bcc: everyone@example.com"]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_every_hostile_subject_survives_as_one_line(value):
    """Each hostile value as the subject reads back as that value on one line; no other header appears."""
    parsed = _round_trip(_message(subject=value))
    # A word longer than a folded line starts on the line after `Subject:`; unfolding keeps that space.
    assert parsed["Subject"].lstrip() == " ".join(one_line(value).split())
    assert set(parsed.keys()) == {
        "From",
        "To",
        "Subject",
        "Date",
        "Message-ID",
        "Auto-Submitted",
        "MIME-Version",
        "Content-Type",
    }


@pytest.mark.parametrize(
    "name", ["山田 太郎", "محمد الأمين", "שׂרה כהן", "Zoë Ødegaard-Łukasiewicz", '"quoted", with comma']
)
def test_recipient_names_in_any_script_survive_in_the_to_header(name):
    """RTL, CJK and punctuated names are encoded in To and decode to the same name and address."""
    parsed = _round_trip(_message(to=Recipient("someone@example.com", name)))
    (address,) = parsed["To"].addresses
    assert (address.display_name, address.addr_spec) == (name, "someone@example.com")


@pytest.mark.parametrize(
    "address",
    [
        "ada@example.com\r\nBcc: x@example.com",
        "ada example.com",
        "ada@@example.com",
        "",
        "ada@exa mple.com",
        "山田@example.com",
        "ada@-bad-.com",
    ],
)
def test_an_unusable_recipient_address_is_refused_for_good(address):
    """An address that cannot be written into a message is refused with MailRefused, not sent."""
    with pytest.raises(InvalidAddress) as raised:
        build_message(_message(to=Recipient(address)), SENDER)
    assert isinstance(raised.value, MailRefused)
    assert "\n" not in raised.value.summary


def test_headers_carry_the_fixed_message_id_the_sender_and_the_date():
    """Message-ID is the caller's, From the configured sender, Date the time of building."""
    message = _message(message_id="<schedule-delivery.42.20261130090000000000@rhythm.test>")
    email = build_message(message, SENDER, now=datetime(2026, 3, 29, 1, 30, tzinfo=UTC))
    assert email["Message-ID"] == "<schedule-delivery.42.20261130090000000000@rhythm.test>"
    assert email["From"] == "Rhythm Exports <exports@rhythm.test>"
    assert email["Date"] == "Sun, 29 Mar 2026 01:30:00 +0000"
    assert email["Auto-Submitted"] == "auto-generated"


def test_an_unsubscribe_url_adds_one_click_headers_and_a_visible_link():
    """RFC 8058: List-Unsubscribe names the URL and List-Unsubscribe-Post asks for one click; both parts link it."""
    url = "https://rhythm.test/unsubscribe/tok3n"
    message = _message(unsubscribe_url=url)
    parsed = _round_trip(message)
    assert parsed["List-Unsubscribe"] == f"<{url}>"
    assert parsed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    text, html = _parts(message)
    assert url in text
    assert url in _parse_html(html).hrefs


def test_without_an_unsubscribe_url_there_are_no_list_headers():
    """A notice with nothing to unsubscribe from carries no List-Unsubscribe headers."""
    parsed = _round_trip(_message())
    assert parsed["List-Unsubscribe"] is None and parsed["List-Unsubscribe-Post"] is None


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "https://rhythm.test/u\r\nBcc: x@example.com",
        "https://rhythm.test/u>x",
        "/relative/path",
        "ftp://rhythm.test/u",
    ],
)
def test_a_link_or_unsubscribe_url_that_is_not_plain_http_is_refused(url):
    """Only absolute http(s) URLs without spaces, quotes, angle brackets or control characters are accepted."""
    with pytest.raises(ValueError):
        _message(unsubscribe_url=url)
    with pytest.raises(ValueError):
        Link("Download", url)


def test_the_download_link_is_in_both_parts():
    """The link's URL is the href in HTML (its & escaped as markup requires) and a line of its own in plain text."""
    text, html = _parts(_message())
    assert "\nhttps://rhythm.test/d/abc?x=1&y=2\n" in text
    assert _parse_html(html).hrefs[0] == "https://rhythm.test/d/abc?x=1&y=2"


def test_message_ids_are_stable_and_distinct_per_kind_and_row():
    """The same row gives the same Message-ID every time; another row, kind or creation time gives another.

    The creation time matters when a database starts again from id 1 beside an outbox that
    still holds the earlier messages."""
    first = message_id_for("schedule-delivery", 7, CREATED, "rhythm.test")
    assert (
        first
        == message_id_for("schedule-delivery", 7, CREATED, "Rhythm.Test")
        == "<schedule-delivery.7.20261130090000000000@rhythm.test>"
    )
    assert (
        len(
            {
                first,
                message_id_for("schedule-delivery", 8, CREATED, "rhythm.test"),
                message_id_for("package-notice", 7, CREATED, "rhythm.test"),
                message_id_for("schedule-delivery", 7, CREATED + timedelta(microseconds=1), "rhythm.test"),
            }
        )
        == 4
    )


@pytest.mark.parametrize(
    ("kind", "row_id", "domain"),
    [
        ("Schedule", 1, "rhythm.test"),
        ("schedule", 0, "rhythm.test"),
        ("schedule", True, "rhythm.test"),
        ("schedule", 1, "bad domain"),
        ("a.b", 1, "x.test"),
    ],
)
def test_message_id_parts_that_could_collide_or_break_the_header_are_refused(kind, row_id, domain):
    """Kinds are lower-case words, row ids positive integers, domains host names."""
    with pytest.raises(ValueError):
        message_id_for(kind, row_id, CREATED, domain)
