"""The one address rule: what the schedule form and the legacy import accept, the mailer sends."""

from __future__ import annotations

from datetime import UTC, datetime
from email.headerregistry import Address

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.communications import InvalidAddress, OutgoingMessage, Recipient, build_message, message_id_for
from app.domain.errors import ValidationError
from app.domain.schedules import schedule_rules
from app.domain.values.email_address import check_address
from app.seed_data import HOSTILE_VALUES

SENDER = Address("Rhythm Exports", "exports", "rhythm.test")
CREATED = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _send(address: str):
    message = OutgoingMessage(
        to=Recipient(address, "Recipient"),
        subject="Weekly hours",
        message_id=message_id_for("schedule-delivery", 7, CREATED, "rhythm.test"),
        heading="Your file is ready",
    )
    return build_message(message, SENDER)


@pytest.mark.parametrize(
    ("address", "ascii_address"),
    [
        ("ada@example.com", "ada@example.com"),
        ("  Ada.Lovelace+hours@Example.COM ", "Ada.Lovelace+hours@Example.COM"),
        ("h2-f@bücher.de", "h2-f@xn--bcher-kva.de"),
        ("ada@пример.рф", "ada@xn--e1afmkfd.xn--p1ai"),
        ("ada@例え.jp", "ada@xn--r8jz45g.jp"),
        ("ada@xn--bcher-kva.de", "ada@xn--bcher-kva.de"),
    ],
)
def test_an_address_the_form_accepts_is_sent_to_its_idna_ascii_form(address, ascii_address):
    assert schedule_rules.valid_address(address) == address.strip()
    assert check_address(address).ascii == ascii_address
    assert _send(address)["To"].addresses[0].addr_spec == ascii_address


@pytest.mark.parametrize("address", ["h2-f@examрle.com", "h2-f@xn--examle-erf.com", "ada@pаypal.com"])
def test_a_domain_mixing_writing_systems_is_refused_by_the_form_and_the_mailer_with_a_sentence(address):
    with pytest.raises(ValidationError) as refused:
        schedule_rules.valid_address(address)
    assert "mixes writing systems" in str(refused.value)
    with pytest.raises(InvalidAddress) as not_sent:
        _send(address)
    assert "mixes writing systems" in not_sent.value.summary


@pytest.mark.parametrize(
    "address",
    ["山田@example.com", "ada@example", "ada@@example.com", "ada@-bad-.com", "ada@xn--zz.com", "a\u2028b@x.com"],
)
def test_an_address_the_mailer_cannot_send_is_refused_by_the_form(address):
    with pytest.raises(ValidationError):
        schedule_rules.valid_address(address)
    with pytest.raises(InvalidAddress):
        _send(address)


_LOCAL = st.from_regex(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\u0400-\u044f-]{1,20}", fullmatch=True)
_LABEL = st.from_regex(r"[a-z0-9\u00e0-\u00ff\u0430-\u044f\u3040-\u309f\u4e00-\u4e20-]{1,12}", fullmatch=True)
_DOMAIN = st.lists(_LABEL, min_size=1, max_size=3).map(".".join).map(lambda domain: f"{domain}.com")
_ADDRESS = st.one_of(
    st.emails(),
    st.builds(lambda local, domain: f"{local}@{domain}", _LOCAL, _DOMAIN),
    st.sampled_from(HOSTILE_VALUES).map(lambda value: f"{value}@example.com"),
    st.text(max_size=40),
)


@settings(derandomize=True, deadline=None, database=None)
@given(_ADDRESS)
def test_whatever_the_form_accepts_the_mailer_can_send(address):
    try:
        accepted = schedule_rules.valid_address(address)
    except ValidationError:
        return
    sent = _send(accepted)
    assert sent["To"].addresses[0].addr_spec == check_address(accepted).ascii
