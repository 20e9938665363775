"""The rules of a schedule's definition shared by the form and the legacy import: recipients, formats, texts."""

from __future__ import annotations

import pytest

from app.domain.errors import ValidationError
from app.domain.schedules.schedule_rules import (
    CUSTOM_MESSAGE,
    NAME,
    RecipientChoice,
    allowed_formats,
    checked_recipients,
    valid_address,
    valid_format,
)

MEMBERS = {"ann@northwind.example": 7, "bo@northwind.example": 8}


def _check(entries, may_add_external=True):
    return checked_recipients(
        entries, member_ids=set(MEMBERS.values()), members_by_email=MEMBERS, may_add_external=may_add_external
    )


def test_addresses_of_members_become_person_recipients_whatever_their_case():
    assert _check(["ANN@Northwind.example", 8, "x@contoso.example"]) == [
        RecipientChoice(person_id=7),
        RecipientChoice(person_id=8),
        RecipientChoice(email="x@contoso.example"),
    ]


def test_address_keys_are_the_person_or_the_lower_cased_address():
    assert [c.address_key for c in _check([7, "X.Y@Contoso.example"])] == ["person:7", "x.y@contoso.example"]


@pytest.mark.parametrize(
    "entries",
    [["a@contoso.example", "A@CONTOSO.EXAMPLE"], [7, "ann@northwind.example"], [8, 8]],
    ids=["address-case", "person-as-id-and-address", "person-twice"],
)
def test_the_same_recipient_twice_is_refused(entries):
    with pytest.raises(ValidationError, match="is listed twice"):
        _check(entries)


def test_fifty_recipients_are_allowed_and_the_fifty_first_is_refused():
    fifty = [f"p{n}@contoso.example" for n in range(50)]
    assert len(_check(fifty)) == 50
    with pytest.raises(ValidationError, match="at most 50 recipients; this one has 51"):
        _check([*fifty, "p50@contoso.example"])


def test_an_outside_address_needs_the_grant_and_the_message_names_who_lacks_it():
    with pytest.raises(ValidationError, match="“x@contoso.example” is not a person of this workspace.*needs you"):
        _check([7, "x@contoso.example"], may_add_external=False)
    assert _check([7, "BO@Northwind.example"], may_add_external=False) == [
        RecipientChoice(person_id=7),
        RecipientChoice(person_id=8),
    ]


def test_an_id_that_is_not_a_member_and_an_empty_list_are_refused():
    with pytest.raises(ValidationError, match="not a person of this workspace"):
        _check([99])
    with pytest.raises(ValidationError, match="Add at least one recipient"):
        _check([])


@pytest.mark.parametrize(
    "address",
    [
        "plain",
        "two@@contoso.example",
        "a b@contoso.example",
        "josé@contoso.example",
        "a@localhost",
        "a@-contoso.example",
        ".a@contoso.example",
        "a@contoso.example\nBcc: b@contoso.example",
        "x" * 250 + "@c.example",
        "a@b\x00.example",
    ],
)
def test_addresses_the_mailer_cannot_send_to_are_refused(address):
    with pytest.raises(ValidationError):
        valid_address(address)


def test_a_valid_address_is_kept_as_typed_without_surrounding_spaces():
    assert valid_address("  O'Brien+rota@Mail.Contoso.example ") == "O'Brien+rota@Mail.Contoso.example"


@pytest.mark.parametrize(
    ("kind", "report_kind", "formats"),
    [
        ("query", None, ("csv", "xlsx")),
        ("report", "table", ("pdf", "xlsx")),
        ("report", "coded", ("pdf", "xlsx")),
        ("report", "summary", ("pdf",)),
    ],
)
def test_formats_follow_the_source(kind, report_kind, formats):
    assert allowed_formats(kind, report_kind) == formats


def test_a_format_is_read_in_any_case_and_refused_outside_the_source_s_formats():
    assert valid_format(" XLSX ", "report", "coded") == "xlsx"
    with pytest.raises(ValidationError, match="A schedule of a summary report makes PDF files."):
        valid_format("xlsx", "report", "summary")


def test_names_and_messages_follow_the_text_rules():
    assert NAME.check("  Weekly hours ") == "Weekly hours"
    assert CUSTOM_MESSAGE.check(None) == ""
    for refused in ("", "   ", "x" * 201, "a\x00"):
        with pytest.raises(ValidationError):
            NAME.check(refused)
    with pytest.raises(ValidationError, match="cannot be saved"):
        CUSTOM_MESSAGE.check("hi \ud800")
