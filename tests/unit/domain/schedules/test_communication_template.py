"""A message template's name, subject and body as they are stored, or refused naming the field."""

from __future__ import annotations

import pytest

from app.domain.errors import ValidationError
from app.domain.schedules.communication_template import (
    MAX_BODY,
    MAX_NAME,
    MAX_SUBJECT,
    TemplateText,
    validate_name,
    validate_text,
)


def refused_field(subject: str = "Hours", body: str = "Attached.") -> str | None:
    with pytest.raises(ValidationError) as caught:
        validate_text(subject, body)
    return caught.value.field


def test_a_name_is_stored_without_surrounding_spaces():
    assert validate_name("  Monthly hours  ") == "Monthly hours"


def test_a_blank_name_is_refused():
    with pytest.raises(ValidationError, match="Give the template a name"):
        validate_name("   ")


def test_a_name_longer_than_allowed_is_refused():
    with pytest.raises(ValidationError, match=f"at most {MAX_NAME} characters"):
        validate_name("n" * (MAX_NAME + 1))


def test_a_name_with_a_nul_character_is_refused():
    with pytest.raises(ValidationError) as caught:
        validate_name("a\x00b")
    assert caught.value.field == "name"


def test_subject_and_body_are_stored_trimmed_with_unix_line_ends():
    assert validate_text(" Hours ", "\r\nLine one\r\nLine two\r\n") == TemplateText("Hours", "Line one\nLine two")


def test_a_blank_subject_is_refused_on_the_subject_field():
    assert refused_field(subject="  ") == "subject"


@pytest.mark.parametrize("line_break", ["\n", "\r", "\v", "\f", "\x85", "\u2028", "\u2029"])
def test_a_subject_of_more_than_one_line_is_refused(line_break):
    """The subject becomes an email header: any line break could start a header of its own."""
    assert refused_field(subject=f"Hours{line_break}Bcc: x@contoso.example") == "subject"


def test_a_subject_longer_than_allowed_is_refused():
    assert refused_field(subject="s" * (MAX_SUBJECT + 1)) == "subject"


def test_a_blank_body_is_refused_on_the_body_field():
    assert refused_field(body=" \r\n ") == "body"


def test_a_body_longer_than_allowed_is_refused():
    assert refused_field(body="b" * (MAX_BODY + 1)) == "body"


def test_a_body_with_a_nul_character_is_refused():
    assert refused_field(body="a\x00b") == "body"
