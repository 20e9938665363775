"""Every single-line field refuses line breaks through one rule (text_rules.refuse_line_breaks)."""

from __future__ import annotations

import pytest

from app.domain.destinations.destination_input import DestinationInput, check_destination
from app.domain.errors import ValidationError
from app.domain.schedules import communication_template, schedule_rules
from app.domain.sources import report_spec
from app.domain.values.text_rules import LINE_BREAKS, refuse_line_breaks

BREAKS = ["\r", "\n", "\r\n", "\u2028", "\u2029", "\x85", "\v", "\f", "\x1e"]


def _destination(name: str) -> DestinationInput:
    return DestinationInput(name, "s3", "bucket-one", "us-east-1", "", "AKIAEXAMPLE", "secret-value", "")


def _report(**changes) -> dict:
    return {"name": "Hours", "kind": "table", "columns": [{"name": "hours", "width": ""}], **changes}


FIELDS = {
    "schedule name": lambda text: schedule_rules.NAME.check(text),
    "template name": lambda text: communication_template.validate_name(text),
    "template subject": lambda text: communication_template.validate_text(text, "Body"),
    "destination name": lambda text: check_destination(
        _destination(text), creating=True, directory_root_configured=False
    ),
    "report name": lambda text: report_spec.validate_report(_report(name=text), "timesheet_entries", ["hours"]),
    "report title": lambda text: report_spec.validate_report(_report(title=text), "timesheet_entries", ["hours"]),
    "report subtitle": lambda text: report_spec.validate_report(_report(subtitle=text), "timesheet_entries", ["hours"]),
}


def test_the_rule_knows_every_character_python_breaks_lines_at():
    breaking = {character for character in map(chr, range(0x3000)) if len(f"a{character}b".splitlines()) > 1}
    assert breaking <= set(LINE_BREAKS)


@pytest.mark.parametrize("line_break", BREAKS)
def test_the_rule_refuses_a_line_break_with_a_sentence(line_break):
    with pytest.raises(ValidationError) as refused:
        refuse_line_breaks(f"Weekly{line_break}hours", "name", "the name")
    assert (str(refused.value), refused.value.field) == (
        "The name must be a single line. Remove the line break.",
        "name",
    )


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("line_break", BREAKS)
def test_every_single_line_field_refuses_a_line_break(field, line_break):
    with pytest.raises(ValidationError) as refused:
        FIELDS[field](f"Weekly{line_break}hours")
    assert "must be a single line" in str(refused.value)


@pytest.mark.parametrize("field", FIELDS)
def test_every_single_line_field_accepts_one_line(field):
    FIELDS[field]("Weekly hours — Team A")
