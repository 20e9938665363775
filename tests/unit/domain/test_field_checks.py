"""FieldChecks: a form's checks all run, and every refused field is reported at once."""

from __future__ import annotations

import pytest

from app.domain.errors import FieldChecks, ValidationError, ValidationErrors


def refuse(message: str, field: str) -> str:
    raise ValidationError(message, field)


def test_a_passed_check_gives_its_value_and_nothing_is_raised():
    checks = FieldChecks()
    assert checks.check(str.strip, "  kept  ") == "kept"
    checks.raise_any()


def test_one_refusal_is_raised_as_itself():
    checks = FieldChecks()
    assert checks.check(refuse, "Give it a name.", "name") is None
    with pytest.raises(ValidationError) as refused:
        checks.raise_any()
    assert not isinstance(refused.value, ValidationErrors)
    assert (str(refused.value), refused.value.field) == ("Give it a name.", "name")


def test_several_refusals_are_raised_together_in_the_order_checked():
    checks = FieldChecks()
    checks.check(refuse, "Give it a name.", "name")
    checks.check(refuse, "Choose a time.", "time")
    with pytest.raises(ValidationErrors) as refused:
        checks.raise_any()
    assert [(str(e), e.field) for e in refused.value.errors] == [
        ("Give it a name.", "name"),
        ("Choose a time.", "time"),
    ]


def test_a_field_keeps_its_first_refusal_only():
    checks = FieldChecks()
    checks.check(refuse, "Give it a name.", "name")
    checks.check(refuse, "That name is taken.", "name")
    checks.check(refuse, "Choose a time.", "time")
    with pytest.raises(ValidationErrors) as refused:
        checks.raise_any()
    assert [str(e) for e in refused.value.errors] == ["Give it a name.", "Choose a time."]
