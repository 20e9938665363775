"""Timetables: what is accepted, what is refused and why, how they are stored and described."""

from __future__ import annotations

from datetime import time

import pytest

from app.domain.errors import ValidationError, ValidationErrors
from app.domain.timing.timetable import Timetable
from tests.factories import hostile_values

WORKSPACE_ZONE = "Europe/London"


def timetable(**data) -> Timetable:
    return Timetable.from_json(data, WORKSPACE_ZONE)


def refusal(**data) -> ValidationError:
    with pytest.raises(ValidationError) as refused:
        Timetable.from_json(data, WORKSPACE_ZONE)
    return refused.value


# Accepted kinds and their stored shape


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "hourly", "minute": 15, "zone": "Asia/Kolkata"},
        {"kind": "daily", "time": "07:30", "zone": "America/New_York"},
        {"kind": "weekly", "days": ["mon", "thu"], "time": "07:30", "zone": "Europe/London"},
        {"kind": "monthly", "day": 28, "time": "00:00", "zone": "Australia/Sydney"},
        {"kind": "monthly", "day": "last", "time": "23:59", "zone": "Pacific/Chatham"},
        {"kind": "cron", "expression": "30 7 * * 1-5", "zone": "America/Santiago"},
    ],
)
def test_every_kind_round_trips_through_its_json(data):
    assert timetable(**data).to_json() == data


def test_the_zone_defaults_to_the_one_the_caller_passes():
    assert timetable(kind="daily", time="07:30").zone == WORKSPACE_ZONE
    assert timetable(kind="daily", time="07:30", zone="").zone == WORKSPACE_ZONE


def test_form_values_arrive_as_text_and_are_read_as_numbers_and_times():
    assert timetable(kind="hourly", minute=" 5 ").minute == 5
    assert timetable(kind="monthly", day="3", time="7:05").month_day == 3
    assert timetable(kind="daily", time="07:30:00").at == time(7, 30)


def test_fields_of_other_kinds_are_ignored_and_not_stored():
    """A form posts every kind's fields; only the chosen kind's are kept."""
    chosen = timetable(kind="daily", time="07:30", minute="99", days=[], day="31", expression="* * * * *")
    assert chosen.to_json() == {"kind": "daily", "time": "07:30", "zone": WORKSPACE_ZONE}


def test_weekdays_are_kept_once_each_in_week_order_whatever_order_they_come_in():
    chosen = timetable(kind="weekly", days=["Sun", "mon", "THU", "mon"], time="07:30")
    assert chosen.to_json()["days"] == ["mon", "thu", "sun"]


def test_a_cron_expression_is_kept_with_single_spaces():
    assert timetable(kind="cron", expression="  30   7 * *\t1-5 ").expression == "30 7 * * 1-5"


# Refusals, each naming its field with a readable message


def test_an_unknown_kind_is_refused():
    refused = refusal(kind="fortnightly")
    assert refused.field == "kind"
    assert "hourly, daily, weekly, monthly or cron" in str(refused)


@pytest.mark.parametrize("minute", [60, -1, "75"])
def test_a_minute_outside_the_hour_is_refused(minute):
    refused = refusal(kind="hourly", minute=minute)
    assert (refused.field, str(refused)) == ("minute", "The minute past the hour must be from 0 to 59.")


@pytest.mark.parametrize("minute", [None, "", "quarter", "1.5", "١٥", True])
def test_a_minute_that_is_not_a_whole_number_is_refused(minute):
    refused = refusal(kind="hourly", minute=minute)
    assert refused.field == "minute"
    assert "whole number from 0 to 59" in str(refused)


@pytest.mark.parametrize("at", [None, "", "24:00", "07:60", "7", "07:30:15", "7.30", "07:30 pm", "٠٧:٣٠"])
def test_a_time_that_is_not_on_the_24_hour_clock_is_refused(at):
    refused = refusal(kind="daily", time=at)
    assert (refused.field, str(refused)) == (
        "time",
        "Enter the time as hours and minutes on the 24-hour clock, such as 07:30.",
    )


@pytest.mark.parametrize("days", [None, [], "", " , "])
def test_a_weekly_timetable_without_days_is_refused(days):
    refused = refusal(kind="weekly", days=days, time="07:30")
    assert (refused.field, str(refused)) == ("days", "Choose at least one day of the week.")


@pytest.mark.parametrize("days", [["mon", "funday"], [1, 2], ["monday"]])
def test_a_day_that_is_not_a_weekday_is_refused(days):
    refused = refusal(kind="weekly", days=days, time="07:30")
    assert (refused.field, str(refused)) == ("days", "Choose days of the week from Monday to Sunday.")


@pytest.mark.parametrize("day", [29, 30, 31, "31"])
def test_a_monthly_day_some_months_lack_is_refused_pointing_to_the_last_day(day):
    refused = refusal(kind="monthly", day=day, time="07:30")
    assert refused.field == "day"
    assert "from 1 to 28, which every month has; for the end of the month choose the last day" in str(refused)


@pytest.mark.parametrize("day", [0, None, "first", "2.0"])
def test_a_monthly_day_that_is_no_day_is_refused(day):
    assert refusal(kind="monthly", day=day, time="07:30").field == "day"


def test_an_unknown_zone_is_refused_with_an_example():
    refused = refusal(kind="daily", time="07:30", zone="Mars/Olympus_Mons")
    assert refused.field == "zone"
    assert str(refused) == (
        "“Mars/Olympus_Mons” is not a time zone of the IANA database; "
        "use a name such as Europe/London or America/New_York."
    )


def test_a_zone_in_the_wrong_case_is_refused_suggesting_its_spelling():
    refused = refusal(kind="daily", time="07:30", zone="europe/london")
    assert str(refused).endswith("did you mean Europe/London?")


def test_a_bad_default_zone_is_refused_too():
    with pytest.raises(ValidationError) as refused:
        Timetable.from_json({"kind": "daily", "time": "07:30"}, "Nowhere/Town")
    assert refused.value.field == "zone"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("", "Enter a cron expression, such as 30 7 * * 1-5."),
        ("30 7 * *", "A cron expression has five fields separated by spaces"),
        ("0 30 7 * * 1", "A cron expression has five fields separated by spaces"),
        ("61 7 * * *", "The minute field of the cron expression (“61”) is not valid."),
        ("0 25 * * *", "The hour field of the cron expression (“25”) is not valid."),
        ("0 7 32 * *", "The day of month field of the cron expression (“32”) is not valid."),
        ("0 7 * 13 *", "The month field of the cron expression (“13”) is not valid."),
        ("0 7 * * MOON", "The day of week field of the cron expression (“MOON”) is not valid."),
        ("0 7 */0 * *", "The day of month field of the cron expression (“*/0”) is not valid."),
        ("0 ٧ * * *", "The hour field of the cron expression (“٧”) is not valid."),
        ("0 " + "9" * 5000 + " * * *", "A cron expression is at most 200 characters."),
    ],
)
def test_a_malformed_cron_expression_is_refused_saying_which_field(expression, message):
    refused = refusal(kind="cron", expression=expression)
    assert refused.field == "expression"
    assert str(refused).startswith(message)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("0 9 31 4 *", "That cron expression names a date that never occurs: April has no 31st day."),
        ("0 7 30 2 *", "That cron expression names a date that never occurs: February has no 30th day."),
        (
            "0 7 31 4,6,9 *",
            "That cron expression names a date that never occurs: April, June and September have no 31st day.",
        ),
    ],
)
def test_a_cron_day_its_months_never_have_is_refused_saying_the_date_never_occurs(expression, message):
    refused = refusal(kind="cron", expression=expression)
    assert (refused.field, str(refused)) == ("expression", message)


# At most hourly


@pytest.mark.parametrize(
    ("expression", "runs"),
    [
        ("*/30 * * * *", "at minutes 0, 30 of every hour"),
        ("0,30 * * * *", "at minutes 0, 30 of every hour"),
        ("0,30 9 * * 1", "at minutes 0, 30 of every hour"),
        ("*/10 9 * * *", "at minutes 0, 10, 20, 30, … of every hour"),
        ("10-12 * * * *", "at minutes 10, 11, 12 of every hour"),
        ("* * * * *", "every minute"),
        ("* 9 * * *", "every minute"),
    ],
)
def test_a_cron_that_could_fire_twice_in_an_hour_is_refused_saying_why(expression, runs):
    refused = refusal(kind="cron", expression=expression)
    assert refused.field == "expression"
    assert str(refused) == (
        f"That cron expression runs {runs}: more often than hourly. A schedule runs at most once an hour, "
        "so the minute field must name exactly one minute, such as 0."
    )


@pytest.mark.parametrize("expression", ["0 * * * *", "59 */2 * * *", "0-0 9 * * *", "5/60 * * * *", "0 9 L * *"])
def test_a_cron_whose_minute_field_names_one_minute_is_accepted(expression):
    assert timetable(kind="cron", expression=expression).expression == expression


@pytest.mark.parametrize("value", hostile_values())
@pytest.mark.parametrize(
    "field_data",
    [
        lambda v: {"kind": "hourly", "minute": v},
        lambda v: {"kind": "daily", "time": v},
        lambda v: {"kind": "weekly", "days": [v], "time": "07:30"},
        lambda v: {"kind": "monthly", "day": v, "time": "07:30"},
        lambda v: {"kind": "cron", "expression": v},
        lambda v: {"kind": "daily", "time": "07:30", "zone": v},
        lambda v: {"kind": v},
    ],
)
def test_hostile_values_are_refused_with_a_message_or_read_as_plain_values(value, field_data):
    """No hostile value raises anything but a ValidationError ("0012" is a fine minute)."""
    try:
        Timetable.from_json(field_data(value), WORKSPACE_ZONE)
    except ValidationError as refused:
        assert refused.field in {"kind", "minute", "time", "days", "day", "expression", "zone"}


def test_input_that_is_not_a_mapping_is_refused():
    with pytest.raises(ValidationError):
        Timetable.from_json(["daily"], WORKSPACE_ZONE)


# Descriptions


@pytest.mark.parametrize(
    ("data", "sentence"),
    [
        ({"kind": "hourly", "minute": 0}, "Every hour on the hour (Europe/London)"),
        ({"kind": "hourly", "minute": 1}, "Every hour at 1 minute past the hour (Europe/London)"),
        ({"kind": "hourly", "minute": 15}, "Every hour at 15 minutes past the hour (Europe/London)"),
        ({"kind": "daily", "time": "7:05", "zone": "Asia/Kolkata"}, "Every day at 07:05 (Asia/Kolkata)"),
        (
            {"kind": "weekly", "days": ["thu", "mon"], "time": "07:30"},
            "Every Monday and Thursday at 07:30 (Europe/London)",
        ),
        (
            {"kind": "weekly", "days": ["mon", "wed", "fri"], "time": "07:30"},
            "Every Monday, Wednesday and Friday at 07:30 (Europe/London)",
        ),
        ({"kind": "weekly", "days": ["sun"], "time": "18:00"}, "Every Sunday at 18:00 (Europe/London)"),
        (
            {"kind": "weekly", "days": ["mon", "tue", "wed", "thu", "fri"], "time": "07:30"},
            "Every weekday (Monday to Friday) at 07:30 (Europe/London)",
        ),
        (
            {"kind": "weekly", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "time": "07:30"},
            "Every day at 07:30 (Europe/London)",
        ),
        ({"kind": "monthly", "day": 1, "time": "06:00"}, "On the 1st of every month at 06:00 (Europe/London)"),
        ({"kind": "monthly", "day": 2, "time": "06:00"}, "On the 2nd of every month at 06:00 (Europe/London)"),
        ({"kind": "monthly", "day": 13, "time": "06:00"}, "On the 13th of every month at 06:00 (Europe/London)"),
        ({"kind": "monthly", "day": 23, "time": "06:00"}, "On the 23rd of every month at 06:00 (Europe/London)"),
        (
            {"kind": "monthly", "day": "last", "time": "06:00"},
            "On the last day of every month at 06:00 (Europe/London)",
        ),
        (
            {"kind": "cron", "expression": "30 7 * * 1,4"},
            "At 07:30 on Monday and Thursday (cron “30 7 * * 1,4”, Europe/London)",
        ),
    ],
)
def test_a_timetable_describes_itself_in_a_sentence(data, sentence):
    assert timetable(**data).describe() == sentence


def test_a_bad_time_and_a_bad_zone_are_refused_together_each_on_its_field():
    refused = refusal(kind="weekly", time="25:00", days=[], zone="Mars/Olympus")
    assert isinstance(refused, ValidationErrors)
    assert [error.field for error in refused.errors] == ["zone", "time", "days"]
