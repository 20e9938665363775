"""Properties every accepted timetable has, in any zone, around any clock change.

Hypothesis draws timetables of every kind (crons with every-hour, stepped, listed and single hour
fields; last-day, nth-weekday and last-weekday days) in zones with ordinary, half-hour,
45-minute and two-hour clock changes, a skipped day (Samoa, 2011) and none, and starts most of
them in the two days before a clock change, at the hours next to it.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.timing.timetable import Due, Timetable, due_occurrences, next_occurrences

ZONES = [
    "Europe/London",
    "America/New_York",
    "Australia/Sydney",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "America/Santiago",
    "Australia/Lord_Howe",
    "America/Caracas",
    "Pacific/Apia",
    "Antarctica/Troll",
    "America/St_Johns",
    "Asia/Tehran",
    "Asia/Kathmandu",
    "UTC",
]
FIRST_YEAR, LAST_YEAR = 2005, 2040
COUNT = 40
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
# How many examples comes from the profile (tests/unit/conftest.py).
PROPERTY_SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def clock_changes(zone_name: str) -> tuple[datetime, ...]:
    """The instants (UTC) at which the zone's offset changed or will change in the years tested."""
    zone = ZoneInfo(zone_name)
    changes = []
    moment, last = datetime(FIRST_YEAR, 1, 1, tzinfo=UTC), datetime(LAST_YEAR, 12, 31, tzinfo=UTC)
    step = timedelta(hours=6)
    while moment < last:
        if moment.astimezone(zone).utcoffset() != (moment + step).astimezone(zone).utcoffset():
            low, high = moment, moment + step
            while high - low > timedelta(seconds=1):
                middle = low + (high - low) // 2
                if middle.astimezone(zone).utcoffset() == low.astimezone(zone).utcoffset():
                    low = middle
                else:
                    high = middle
            changes.append(high)
        moment += step
    return tuple(changes)


@st.composite
def cases(draw, kinds=("hourly", "daily", "weekly", "monthly", "cron")) -> tuple[Timetable, datetime]:
    """A timetable and a start, mostly in the two days before a clock change, at hours next to it."""
    zone_name = draw(st.sampled_from(ZONES))
    changes = clock_changes(zone_name)
    if changes and draw(st.integers(0, 3)) > 0:
        change = draw(st.sampled_from(changes))
        after = change - timedelta(seconds=draw(st.integers(0, 50 * 3600)))
        zone = ZoneInfo(zone_name)
        offsets = {(change + timedelta(seconds=side)).astimezone(zone).utcoffset() for side in (-1, 0)}
        # Wall-clock hours on both sides of the change, the skipped or repeated ones included.
        near = sorted(
            {
                (change.replace(tzinfo=None) + offset + timedelta(minutes=shift)).hour
                for offset in offsets
                for shift in range(-90, 91, 30)
            }
        )
        hour = draw(st.sampled_from(near)) if draw(st.integers(0, 3)) > 0 else draw(st.integers(0, 23))
    else:
        after = draw(st.datetimes(datetime(FIRST_YEAR, 1, 1), datetime(LAST_YEAR, 1, 1), timezones=st.just(UTC)))
        hour = draw(st.integers(0, 23))
    minute = draw(st.integers(0, 59))
    at = f"{hour:02d}:{minute:02d}"
    kind = draw(st.sampled_from(kinds))
    if kind == "hourly":
        data = {"minute": minute}
    elif kind == "daily":
        data = {"time": at}
    elif kind == "weekly":
        data = {"time": at, "days": draw(st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True))}
    elif kind == "monthly":
        data = {"time": at, "day": draw(st.one_of(st.integers(1, 28), st.just("last")))}
    else:
        hours = draw(
            st.sampled_from(
                [
                    "*",
                    "*/2",
                    "*/3",
                    "0-23",
                    f"{hour}",
                    f"{hour},{(hour + 1) % 24}",
                    f"{max(hour - 1, 0)}-{hour}",
                    f"{max(hour - 1, 0)}-{min(hour + 1, 23)}",
                    f"{hour}-23/2",
                ]
            )
        )
        minutes = draw(st.sampled_from([f"{minute}", f"{minute}-{minute}"]))
        day = draw(st.sampled_from(["*", "*", "1", "15", "L", "1-7", "*/10", "28-31"]))
        month = draw(st.sampled_from(["*", "*", "3", "3,4,9,10,11", "*/2", "OCT"]))
        weekday = draw(st.sampled_from(["*", "*", "0", "1-5", "SUN", "6#1", "5L"]))
        data = {"expression": f"{minutes} {hours} {day} {month} {weekday}"}
    return Timetable.from_json({"kind": kind, **data, "zone": zone_name}, "UTC"), after


@PROPERTY_SETTINGS
@given(cases())
def test_every_occurrence_is_after_the_start_and_after_the_one_before(case):
    timetable, after = case
    runs = next_occurrences(timetable, after, COUNT)
    assert all(run > after for run in runs)
    assert runs == sorted(set(runs))


@PROPERTY_SETTINGS
@given(cases(kinds=("hourly",)))
def test_a_clock_change_never_removes_an_hourly_run(case):
    """Every moment the zone's clock shows minute M (twice over a repeated hour, half an hour apart on
    Lord Howe Island) is a run: the clock change may add the end of a gap, never take a run away."""
    timetable, after = case
    runs = next_occurrences(timetable, after, COUNT)
    zone = ZoneInfo(timetable.zone)
    shown = []
    moment = runs[0]
    while moment <= runs[-1]:
        if moment.astimezone(zone).minute == timetable.minute:
            shown.append(moment)
        moment += timedelta(minutes=1)
    assert set(shown) <= set(runs)


@PROPERTY_SETTINGS
@given(cases(), st.integers(1, COUNT - 1))
def test_the_occurrences_after_one_of_them_are_the_rest_of_the_list(case, position):
    """What the ticker does: after running an occurrence it asks for the next ones from there."""
    timetable, after = case
    runs = next_occurrences(timetable, after, COUNT)
    if len(runs) > position:
        assert next_occurrences(timetable, runs[position - 1], COUNT - position) == runs[position:]


@PROPERTY_SETTINGS
@given(cases(), st.integers(0, 10 * 24 * 3600))
def test_a_later_start_gives_the_same_occurrences_from_there_on(case, later_by):
    timetable, after = case
    later = after + timedelta(seconds=later_by)
    runs = next_occurrences(timetable, after, COUNT)
    from_later = next_occurrences(timetable, later, COUNT)
    expected = [run for run in runs if run > later]
    assert from_later[: len(expected)] == expected


@PROPERTY_SETTINGS
@given(cases(), st.integers(0, 5 * 24 * 3600))
def test_due_occurrences_coalesce_everything_missed_into_the_latest(case, downtime):
    timetable, last_run = case
    now = last_run + timedelta(seconds=downtime)
    missed = [run for run in next_occurrences(timetable, last_run, 24 * 5 + 2) if run <= now]
    expected = Due(missed[-1], missed[:-1]) if missed else Due(None, [])
    assert due_occurrences(timetable, last_run, now) == expected


@PROPERTY_SETTINGS
@given(cases(kinds=("daily",)))
def test_a_daily_timetable_runs_once_on_every_local_day(case):
    """Consecutive runs fall on consecutive local dates, whatever the clock did in between.

    Samoa's 30 December 2011 never happened: a daily timetable runs that day's run at 00:00 on
    the 31st (the first valid local time after the gap), so that date alone can have two runs.
    """
    timetable, after = case
    zone = ZoneInfo(timetable.zone)
    days = [run.astimezone(zone).date() for run in next_occurrences(timetable, after, COUNT)]
    gaps = {later - earlier for earlier, later in zip(days, days[1:], strict=False) if later != date(2011, 12, 31)}
    assert gaps <= {timedelta(days=1)}
