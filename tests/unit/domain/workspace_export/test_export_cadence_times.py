"""The next cadence instant of a workspace export and the period key each execution is for."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from app.domain.errors import ValidationError
from app.domain.workspace_export.export_cadence import cadence_key, cadence_key_at, next_cadence_at


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_an_off_cadence_never_comes():
    assert next_cadence_at("off", "02:00", None, None, "Europe/London", utc(2026, 12, 1)) is None


def test_daily_comes_later_the_same_day_when_the_time_is_still_ahead():
    assert next_cadence_at("daily", "14:30", None, None, "UTC", utc(2026, 12, 1, 9)) == utc(2026, 12, 1, 14, 30)


def test_daily_is_strictly_after_the_moment_so_the_instant_itself_moves_to_the_next_day():
    assert next_cadence_at("daily", "14:30", None, None, "UTC", utc(2026, 12, 1, 14, 30)) == utc(2026, 12, 2, 14, 30)


def test_daily_time_is_wall_clock_time_in_the_zone():
    # Auckland is UTC+13 in December: 06:00 there is 17:00 UTC the day before.
    assert next_cadence_at("daily", "06:00", None, None, "Pacific/Auckland", utc(2026, 12, 1)) == utc(2026, 12, 1, 17)


def test_weekly_comes_on_the_chosen_weekday():
    # 2026-12-01 is a Tuesday; weekday 4 is Friday.
    assert next_cadence_at("weekly", "08:00", 4, None, "UTC", utc(2026, 12, 1)) == utc(2026, 12, 4, 8)


def test_weekly_on_monday_after_monday_passed_waits_a_week():
    assert next_cadence_at("weekly", "08:00", 0, None, "UTC", utc(2026, 11, 30, 9)) == utc(2026, 12, 7, 8)


def test_monthly_comes_on_the_chosen_day_of_the_next_month_once_this_months_passed():
    assert next_cadence_at("monthly", "03:15", None, 28, "UTC", utc(2026, 12, 29)) == utc(2027, 1, 28, 3, 15)


def test_daily_keeps_its_wall_clock_time_across_the_spring_change():
    before = next_cadence_at("daily", "07:00", None, None, "Europe/London", utc(2027, 3, 27))
    after = next_cadence_at("daily", "07:00", None, None, "Europe/London", before)
    assert (before, after) == (utc(2027, 3, 27, 7), utc(2027, 3, 28, 6))


def test_a_time_the_clock_skips_runs_at_the_end_of_the_gap():
    # New York skips 02:00–03:00 on 2026-03-08; 02:30 runs at 03:00 EDT (07:00 UTC).
    assert next_cadence_at("daily", "02:30", None, None, "America/New_York", utc(2026, 3, 8)) == utc(2026, 3, 8, 7)


def test_a_time_the_clock_shows_twice_runs_once_at_the_first():
    # New York shows 01:00–02:00 twice on 2026-11-01: 01:30 EDT is 05:30 UTC, 01:30 EST 06:30 UTC.
    first = next_cadence_at("daily", "01:30", None, None, "America/New_York", utc(2026, 11, 1))
    following = next_cadence_at("daily", "01:30", None, None, "America/New_York", first)
    assert (first, following) == (utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30))


def test_monthly_in_the_southern_autumn_change_keeps_the_local_time():
    # Sydney leaves daylight saving on 2026-04-05: 10:00 is 23:00 UTC before it and 00:00 UTC after.
    march = next_cadence_at("monthly", "10:00", None, 5, "Australia/Sydney", utc(2026, 3, 1))
    april = next_cadence_at("monthly", "10:00", None, 5, "Australia/Sydney", march)
    assert (march, april) == (utc(2026, 3, 4, 23), utc(2026, 4, 5, 0))


@pytest.mark.parametrize(
    ("cadence", "at", "weekday", "day", "zone", "field"),
    [
        ("daily", "25:00", None, None, "UTC", "time"),
        ("daily", "7", None, None, "UTC", "time"),
        ("daily", "07:00", None, None, "Mars/Olympus_Mons", "zone"),
        ("weekly", "07:00", 7, None, "UTC", "days"),
        ("weekly", "07:00", None, None, "UTC", "days"),
        ("monthly", "07:00", None, 29, "UTC", "day"),
        ("monthly", "07:00", None, None, "UTC", "day"),
    ],
)
def test_a_bad_cadence_field_is_refused_by_name(cadence, at, weekday, day, zone, field):
    with pytest.raises(ValidationError) as refused:
        next_cadence_at(cadence, at, weekday, day, zone, utc(2026, 12, 1))
    assert refused.value.field == field


def test_daily_key_names_the_local_date():
    assert cadence_key("daily", date(2026, 12, 1)) == "daily:2026-12-01"


def test_weekly_key_names_the_iso_week():
    assert cadence_key("weekly", date(2026, 12, 1)) == "weekly:2026-W49"


def test_weekly_key_uses_the_iso_year_at_the_turn_of_the_year():
    assert cadence_key("weekly", date(2027, 1, 1)) == "weekly:2026-W53"


def test_monthly_key_names_the_month():
    assert cadence_key("monthly", date(2026, 12, 31)) == "monthly:2026-12"


def test_an_off_cadence_has_no_key():
    with pytest.raises(ValueError):
        cadence_key("off", date(2026, 12, 1))


def test_the_key_of_an_instant_is_its_local_date_in_the_zone():
    assert cadence_key_at("daily", utc(2026, 12, 1, 23, 30), "Pacific/Auckland") == "daily:2026-12-02"
