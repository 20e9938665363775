"""Pure parts of the schedule pages: the address check, the frequencies offered, the query-in-use refusal."""

from __future__ import annotations

import pytest

from app.blueprints.schedules.routes import FREQUENCIES
from app.domain.errors import ValidationError
from app.domain.sources.report_spec import QueryInUse
from app.domain.timing.timetable import TimetableKind
from app.domain.values.email_address import check_address
from app.services.schedules.schedules import Recipient


@pytest.mark.parametrize("address", ["ann@example.org", "a.b+tag@sub.example.co.uk", "y@exämple.de"])
def test_plausible_addresses_are_accepted(address):
    assert check_address(address).typed == address


@pytest.mark.parametrize(
    "address",
    [
        "ann",
        "ann@",
        "@example.org",
        "ann@example",
        "ann@@example.org",
        "ann smith@example.org",
        "Ann <ann@example.org>",
        "ann@example.org, bob@example.org",
        "ann@example.",
    ],
)
def test_implausible_addresses_are_refused(address):
    with pytest.raises(ValidationError):
        check_address(address)


def test_the_form_offers_every_timetable_kind():
    assert tuple(FREQUENCIES) == tuple(TimetableKind)


def test_recipients_are_distinct_by_person_or_by_address_in_lower_case():
    assert Recipient(7, None).address_key == "person:7"
    assert Recipient(None, "Ann@Example.ORG").address_key == "ann@example.org"


def test_query_in_use_names_the_schedules_as_well_as_the_reports():
    message = str(QueryInUse(["Weekly hours"], ["Monday digest", "Friday digest"]))
    assert "the report “Weekly hours”" in message
    assert "the schedules “Monday digest”, “Friday digest”" in message
    assert "Delete or change them first." in message


def test_query_in_use_by_one_schedule_only():
    assert str(QueryInUse([], ["Monday digest"])) == (
        "This query is used by the schedule “Monday digest”. Delete or change it first."
    )
