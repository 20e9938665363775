"""Occurrences on the days clocks change, in zones north and south, with odd offsets and none.

The rules (app/domain/timing/timetable.py): a skipped wall-clock time runs at the first valid local
time after the gap; a repeated one runs at the first of the two; a timetable that runs every
hour runs in every real hour instead; and a clock change never removes a run.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from app.domain.timing.timetable import Timetable, next_occurrences

# zone, a spring-forward day, a time its clock skips, the first valid local time after that gap,
# a fall-back day, a time its clock shows twice (2026, and 2027 for a spring day a monthly timetable can name).
CLOCK_CHANGES = [
    ("Europe/London", date(2027, 3, 28), time(1, 30), time(2, 0), date(2026, 10, 25), time(1, 30)),
    ("America/New_York", date(2026, 3, 8), time(2, 30), time(3, 0), date(2026, 11, 1), time(1, 30)),
    ("Australia/Sydney", date(2026, 10, 4), time(2, 30), time(3, 0), date(2026, 4, 5), time(2, 30)),
    ("Pacific/Chatham", date(2026, 9, 27), time(3, 0), time(3, 45), date(2026, 4, 5), time(3, 0)),
    ("America/Santiago", date(2026, 9, 6), time(0, 30), time(1, 0), date(2026, 4, 4), time(23, 30)),
    ("Australia/Lord_Howe", date(2026, 10, 4), time(2, 15), time(2, 30), date(2026, 4, 5), time(1, 45)),
]
ZONE_IDS = [case[0] for case in CLOCK_CHANGES]
# Zones whose clocks change by a whole hour, so an hourly timetable keeps a steady beat in UTC.
WHOLE_HOUR_CHANGES = [case for case in CLOCK_CHANGES if case[0] != "Australia/Lord_Howe"]


def kinds_at(day: date, at: time, zone: str) -> dict[str, Timetable]:
    """Every kind of timetable that names `at` on `day` (and on other days)."""
    clock = f"{at:%H:%M}"
    shapes = {
        "daily": {"kind": "daily", "time": clock},
        "weekly": {
            "kind": "weekly",
            "days": [("mon", "tue", "wed", "thu", "fri", "sat", "sun")[day.weekday()]],
            "time": clock,
        },
        "monthly": {"kind": "monthly", "day": day.day, "time": clock},
        "cron": {"kind": "cron", "expression": f"{at.minute} {at.hour} * * *"},
        "cron on that date": {"kind": "cron", "expression": f"{at.minute} {at.hour} {day.day} {day.month} *"},
    }
    return {name: Timetable.from_json({**shape, "zone": zone}, "UTC") for name, shape in shapes.items()}


KIND_NAMES = ["daily", "weekly", "monthly", "cron", "cron on that date"]


def runs_on(timetable: Timetable, day: date) -> list[datetime]:
    """The occurrences whose local date (in the timetable's zone) is `day`, as local datetimes."""
    zone = ZoneInfo(timetable.zone)
    start = datetime.combine(day, time(0), zone).astimezone(UTC) - timedelta(hours=3)
    local = [instant.astimezone(zone) for instant in next_occurrences(timetable, start, 30)]
    return [moment for moment in local if moment.date() == day]


def gaps_in_utc(runs: list[datetime]) -> set[timedelta]:
    """The distinct intervals between consecutive runs (in UTC: aware datetimes of one zone subtract as wall times)."""
    instants = [run.astimezone(UTC) for run in runs]
    return {later - earlier for earlier, later in zip(instants, instants[1:], strict=False)}


def offset_on(zone: str, day: date) -> timedelta:
    return datetime.combine(day, time(12), ZoneInfo(zone)).utcoffset()


@pytest.mark.parametrize("kind", KIND_NAMES)
@pytest.mark.parametrize(("zone", "spring", "skipped", "after_gap", "_fall", "_repeated"), CLOCK_CHANGES, ids=ZONE_IDS)
def test_a_time_the_clock_skips_runs_once_at_the_first_valid_local_time_after_the_gap(
    kind, zone, spring, skipped, after_gap, _fall, _repeated
):
    runs = runs_on(kinds_at(spring, skipped, zone)[kind], spring)
    assert [(run.time(), run.utcoffset()) for run in runs] == [(after_gap, offset_on(zone, spring + timedelta(1)))]


@pytest.mark.parametrize(("zone", "spring", "skipped", "_after_gap", "_fall", "_repeated"), CLOCK_CHANGES, ids=ZONE_IDS)
def test_the_day_after_a_skipped_time_runs_at_the_chosen_time_again(
    zone, spring, skipped, _after_gap, _fall, _repeated
):
    daily = kinds_at(spring, skipped, zone)["daily"]
    assert [run.time() for run in runs_on(daily, spring + timedelta(1))] == [skipped]


@pytest.mark.parametrize("kind", KIND_NAMES)
@pytest.mark.parametrize(("zone", "_spring", "_skipped", "_after_gap", "fall", "repeated"), CLOCK_CHANGES, ids=ZONE_IDS)
def test_a_time_the_clock_shows_twice_runs_once_at_the_first_of_the_two(
    kind, zone, _spring, _skipped, _after_gap, fall, repeated
):
    runs = runs_on(kinds_at(fall, repeated, zone)[kind], fall)
    assert [(run.time(), run.utcoffset()) for run in runs] == [(repeated, offset_on(zone, fall - timedelta(1)))]


@pytest.mark.parametrize(
    ("zone", "spring", "skipped", "_after_gap", "_fall", "_repeated"),
    WHOLE_HOUR_CHANGES,
    ids=[case[0] for case in WHOLE_HOUR_CHANGES],
)
def test_an_hourly_timetable_runs_in_each_of_the_23_real_hours_of_a_spring_forward_day(
    zone, spring, skipped, _after_gap, _fall, _repeated
):
    hourly = Timetable.from_json({"kind": "hourly", "minute": skipped.minute, "zone": zone}, "UTC")
    runs = runs_on(hourly, spring)
    assert len(runs) == 23
    assert gaps_in_utc(runs) == {timedelta(hours=1)}


@pytest.mark.parametrize(
    ("zone", "_spring", "_skipped", "_after_gap", "fall", "repeated"),
    WHOLE_HOUR_CHANGES,
    ids=[case[0] for case in WHOLE_HOUR_CHANGES],
)
def test_an_hourly_timetable_runs_in_both_repeated_hours_of_a_fall_back_day_an_hour_apart(
    zone, _spring, _skipped, _after_gap, fall, repeated
):
    hourly = Timetable.from_json({"kind": "hourly", "minute": repeated.minute, "zone": zone}, "UTC")
    runs = runs_on(hourly, fall)
    assert len(runs) == 25
    assert [run.utcoffset() for run in runs if run.time() == repeated] == [
        offset_on(zone, fall - timedelta(1)),
        offset_on(zone, fall + timedelta(1)),
    ]
    assert gaps_in_utc(runs) == {timedelta(hours=1)}


def test_an_hourly_timetable_runs_in_all_26_real_hours_when_the_clock_goes_back_two_hours():
    """Antarctica/Troll goes from +02:00 to +00:00: 01:00–03:00 happen twice, and each is a real hour."""
    hourly = Timetable.from_json({"kind": "hourly", "minute": 30, "zone": "Antarctica/Troll"}, "UTC")
    runs = runs_on(hourly, date(2026, 10, 25))
    assert len(runs) == 26
    assert gaps_in_utc(runs) == {timedelta(hours=1)}


def test_a_cron_every_hour_on_chosen_days_runs_in_both_repeated_hours():
    sundays = Timetable.from_json({"kind": "cron", "expression": "30 * * * 0", "zone": "America/New_York"}, "UTC")
    assert len(runs_on(sundays, date(2026, 11, 1))) == 25


def test_lord_howe_half_hour_fall_back_runs_both_repeated_times_leaving_no_90_minute_gap():
    """01:45 (+11:00) and 01:45 (+10:30) are two real times half an hour apart: both run, as every hour does."""
    hourly = Timetable.from_json({"kind": "hourly", "minute": 45, "zone": "Australia/Lord_Howe"}, "UTC")
    runs = runs_on(hourly, date(2027, 4, 4))
    assert [f"{run:%H:%M%z}" for run in runs[:5]] == [
        "00:45+1100",
        "01:45+1100",
        "01:45+1030",
        "02:45+1030",
        "03:45+1030",
    ]
    assert max(gaps_in_utc(runs)) == timedelta(hours=1)


def test_lord_howe_half_hour_spring_forward_keeps_the_run_half_an_hour_after_another():
    """01:45 (+10:30) and 02:45 (+11:00) are 30 minutes apart: the timetable names both, so both run."""
    hourly = Timetable.from_json({"kind": "hourly", "minute": 45, "zone": "Australia/Lord_Howe"}, "UTC")
    runs = runs_on(hourly, date(2026, 10, 4))
    assert [f"{run:%H:%M%z}" for run in runs[:4]] == ["00:45+1030", "01:45+1030", "02:45+1100", "03:45+1100"]


def test_lord_howe_half_hour_spring_forward_runs_a_skipped_hourly_time_at_the_end_of_the_gap():
    """02:15 never shows, but skipping it would leave 90 minutes without a run: it runs at 02:30 (+11:00)."""
    hourly = Timetable.from_json({"kind": "hourly", "minute": 15, "zone": "Australia/Lord_Howe"}, "UTC")
    runs = runs_on(hourly, date(2026, 10, 4))
    assert [f"{run:%H:%M%z}" for run in runs[:4]] == ["00:15+1030", "01:15+1030", "02:30+1100", "03:15+1100"]
    assert max(gaps_in_utc(runs)) == timedelta(hours=1)


def test_a_cron_at_consecutive_hours_keeps_the_moved_run_half_an_hour_after_another():
    """02:30 does not exist and runs at 03:00 EDT (07:00Z), 30 minutes after 01:30 EST (06:30Z): both run."""
    cron = Timetable.from_json({"kind": "cron", "expression": "30 1,2 * * *", "zone": "America/New_York"}, "UTC")
    runs = runs_on(cron, date(2027, 3, 14))
    assert [f"{run.astimezone(UTC):%H:%MZ}" for run in runs] == ["06:30Z", "07:00Z"]


def test_a_cron_at_three_consecutive_hours_runs_all_three():
    cron = Timetable.from_json({"kind": "cron", "expression": "30 1,2,3 * * *", "zone": "America/New_York"}, "UTC")
    assert [f"{run:%H:%M%z}" for run in runs_on(cron, date(2026, 3, 8))] == ["01:30-0500", "03:00-0400", "03:30-0400"]


def test_two_times_that_land_on_the_same_instant_run_once():
    """02:00 is skipped and moves to 03:00 EDT, where the 03:00 run already is: one instant, one run."""
    cron = Timetable.from_json({"kind": "cron", "expression": "0 2,3 * * *", "zone": "America/New_York"}, "UTC")
    assert [f"{run:%H:%M%z}" for run in runs_on(cron, date(2026, 3, 8))] == ["03:00-0400"]


def test_a_cron_at_chosen_hours_runs_a_repeated_time_once():
    cron = Timetable.from_json({"kind": "cron", "expression": "30 1,2 * * *", "zone": "America/New_York"}, "UTC")
    assert [f"{run:%H:%M%z}" for run in runs_on(cron, date(2026, 11, 1))] == ["01:30-0400", "02:30-0500"]


def test_a_zone_without_daylight_saving_runs_every_24_hours_at_its_half_hour_offset():
    daily = Timetable.from_json({"kind": "daily", "time": "07:30", "zone": "Asia/Kolkata"}, "UTC")
    runs = next_occurrences(daily, datetime(2026, 1, 1, tzinfo=UTC), 365)
    assert runs[0] == datetime(2026, 1, 1, 2, 0, tzinfo=UTC)
    assert {later - earlier for earlier, later in zip(runs, runs[1:], strict=False)} == {timedelta(days=1)}


def test_the_last_day_of_the_month_follows_the_calendar_in_the_zone():
    last = Timetable.from_json({"kind": "monthly", "day": "last", "time": "23:30", "zone": "Pacific/Chatham"}, "UTC")
    runs = next_occurrences(last, datetime(2028, 1, 15, tzinfo=UTC), 3)
    assert [f"{run.astimezone(ZoneInfo('Pacific/Chatham')):%Y-%m-%d %H:%M}" for run in runs] == [
        "2028-01-31 23:30",
        "2028-02-29 23:30",
        "2028-03-31 23:30",
    ]
