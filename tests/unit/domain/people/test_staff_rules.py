"""What every staff action asks: `staff.execute`, and one reason rule with one limit (issue 26, items 5 and 7)."""

from __future__ import annotations

import pytest

from app.domain.errors import AccessDenied, ValidationError
from app.domain.people.staff_rules import REASON_LIMIT, may_act, refuse_unless_staff_executor, staff_reason
from app.models import Person


@pytest.mark.parametrize(
    ("is_staff", "permissions", "allowed"),
    [
        (True, ["staff.view", "staff.execute"], True),
        (True, ["staff.execute"], True),
        (True, ["staff.view"], False),
        (False, ["staff.execute"], False),
        (True, [], False),
    ],
)
def test_only_staff_holding_staff_execute_may_act(is_staff, permissions, allowed):
    person = Person(is_staff=is_staff, staff_permissions=permissions)

    assert may_act(person) is allowed


def test_a_person_who_may_not_act_is_refused_with_a_sentence():
    with pytest.raises(AccessDenied, match="staff.execute"):
        refuse_unless_staff_executor(Person(is_staff=True, staff_permissions=["staff.view"]))


def test_the_reason_limit_is_the_one_the_docs_give():
    assert REASON_LIMIT == 1000


def test_a_reason_is_trimmed_and_kept_up_to_the_limit():
    assert staff_reason("  " + "r" * REASON_LIMIT + "\n") == "r" * REASON_LIMIT


@pytest.mark.parametrize("text", [None, "", "  \n ", "r" * (REASON_LIMIT + 1), "bad\x00reason"])
def test_a_missing_too_long_or_unstorable_reason_is_refused(text):
    with pytest.raises(ValidationError) as refusal:
        staff_reason(text)

    assert refusal.value.field == "reason"
