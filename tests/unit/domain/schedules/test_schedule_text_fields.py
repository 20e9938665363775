"""A schedule's name and custom message get one answer wherever they come from: the schedule
form (its WTForms validators, then the service's check) and the legacy import (the check alone)
accept the same values, trimmed alike, and refuse the same ones."""

from __future__ import annotations

import pytest
from flask import Flask
from werkzeug.datastructures import MultiDict

from app.blueprints.schedules.forms import ScheduleForm
from app.domain.errors import ValidationError
from app.domain.schedules.schedule_rules import CUSTOM_MESSAGE, NAME
from app.domain.values.text_rules import TextField

REFUSED = "refused"

HOSTILE = [
    "Weekly hours",
    "  Weekly hours  ",
    "",
    "   ",
    "\t\n ",
    "a\x00b",
    "\x00",
    "lone \ud800 surrogate",
    "\udfff",
    "\u2028Weekly",
    "Weekly\u2028",
    "Week\u2029ly",
    "Week\nly",
    "\r\nWeekly",
    "\x85Weekly",
    "\u00a0Weekly\u00a0",
    "\u200bWeekly",
    "Wöchentlich ✓",
    "x" * 200,
    "x" * 201,
    " " + "x" * 200 + " ",
    "x" * 5000,
    "x" * 5001,
    "y" * 20001,
]


def _form_answer(declared: TextField, value: str) -> str:
    app = Flask(__name__)
    app.config.update(SECRET_KEY="test", WTF_CSRF_ENABLED=False)
    # Handed over as the request's form after decoding: a lone surrogate cannot travel as UTF-8.
    with app.test_request_context(method="POST"):
        form = ScheduleForm(formdata=MultiDict({declared.name: value}))
        field = form[declared.name]
        if not field.validate(form):
            return REFUSED
        return _rule_answer(declared, field.data)


def _rule_answer(declared: TextField, value: object) -> str:
    try:
        return declared.check(value)
    except ValidationError:
        return REFUSED


@pytest.mark.parametrize("declared", [NAME, CUSTOM_MESSAGE], ids=["name", "custom message"])
@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_the_form_and_the_legacy_import_answer_alike(declared, value):
    assert _form_answer(declared, value) == _rule_answer(declared, value)


def test_a_line_break_in_the_name_is_refused_even_where_trimming_would_remove_it():
    for value in ("\u2028Weekly", "Weekly\n", "\x85Weekly"):
        assert _rule_answer(NAME, value) == REFUSED
    assert CUSTOM_MESSAGE.check("\u2028Hello\nthere") == "Hello\nthere"


def test_characters_the_database_cannot_hold_are_refused_in_both_fields():
    for declared in (NAME, CUSTOM_MESSAGE):
        for value in ("a\x00b", "a\ud800b"):
            with pytest.raises(ValidationError, match="cannot be saved") as refused:
                declared.check(value)
            assert refused.value.field == declared.name


def test_each_limit_is_the_declared_one_with_its_sentence():
    assert NAME.check("x" * NAME.limit) == "x" * NAME.limit
    with pytest.raises(ValidationError, match="The name is at most 200 characters."):
        NAME.check("x" * (NAME.limit + 1))
    with pytest.raises(ValidationError, match="The custom message is at most 5,000 characters."):
        CUSTOM_MESSAGE.check("x" * (CUSTOM_MESSAGE.limit + 1))
    assert CUSTOM_MESSAGE.check(None) == ""
    with pytest.raises(ValidationError, match="Give the schedule a name."):
        NAME.check(None)
