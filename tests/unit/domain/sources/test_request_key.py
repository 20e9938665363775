"""The key a file request is admitted under: one rendered form's token with the choices it was sent with."""

from __future__ import annotations

import pytest

from app.domain.errors import ValidationError
from app.domain.values.text_rules import new_request_token, request_key

CSV = {"format": "csv", "heading": "names", "include_descriptions": False}


def test_one_form_sent_again_with_the_same_choices_has_the_same_key():
    token = new_request_token()
    assert request_key(token, CSV) == request_key(token, dict(reversed(CSV.items())))


@pytest.mark.parametrize("changed", [{"format": "xlsx"}, {"heading": "labels"}, {"include_descriptions": True}])
def test_one_form_sent_with_a_choice_changed_has_another_key(changed):
    token = new_request_token()
    assert request_key(token, CSV) != request_key(token, {**CSV, **changed})


def test_two_renderings_of_a_form_have_different_keys_for_the_same_choices():
    assert request_key(new_request_token(), CSV) != request_key(new_request_token(), CSV)


def test_the_key_fits_the_stored_column():
    assert len(request_key(new_request_token(), CSV)) <= 64


def test_a_form_without_a_token_has_no_key():
    assert request_key("", CSV) is None and request_key(None, CSV) is None


@pytest.mark.parametrize("damaged", ["short", "x" * 65, "bad token with spaces!!", "é" * 30])
def test_a_damaged_token_is_refused_with_a_message(damaged):
    with pytest.raises(ValidationError, match="The form was damaged on its way here"):
        request_key(damaged, CSV)
