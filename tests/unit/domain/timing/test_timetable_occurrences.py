"""Occurrences for the ticker and the form: the next ones, the ones due now, and both zones' view."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.domain.errors import ValidationError
from app.domain.timing.timetable import (
    Due,
    Timetable,
    due_occurrences,
    next_occurrence,
    next_occurrences,
    viewer_times,
    wall_clock_label,
)

HOURLY_UTC = Timetable.from_json({"kind": "hourly", "minute": 0}, "UTC")
DAILY_LONDON = Timetable.from_json({"kind": "daily", "time": "07:30"}, "Europe/London")


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_the_next_occurrences_start_strictly_after_the_given_instant():
    assert next_occurrences(HOURLY_UTC, utc(2026, 1, 1, 5), 2) == [utc(2026, 1, 1, 6), utc(2026, 1, 1, 7)]


def test_next_occurrence_is_the_first_of_the_next_occurrences():
    assert next_occurrence(DAILY_LONDON, utc(2026, 7, 1, 12)) == utc(2026, 7, 2, 6, 30)


def test_occurrences_are_in_utc_whatever_zone_the_start_is_given_in():
    start = datetime(2026, 7, 1, 8, 0, tzinfo=timezone(timedelta(hours=2)))
    found = next_occurrence(HOURLY_UTC, start)
    assert (found, found.tzinfo) == (utc(2026, 7, 1, 7), UTC)


def test_a_naive_start_is_a_programming_error():
    with pytest.raises(ValueError, match="aware"):
        next_occurrences(HOURLY_UTC, datetime(2026, 1, 1), 1)


def test_asking_for_no_occurrences_gives_none():
    assert next_occurrences(HOURLY_UTC, utc(2026, 1, 1), 0) == []


def test_a_cron_naming_a_date_that_never_comes_is_refused():
    """Day 1 of a month that is also its fifth Monday (a star-led day field makes cron require both)."""
    with pytest.raises(ValidationError, match="never occurs"):
        Timetable.from_json({"kind": "cron", "expression": "0 0 */31 * 1#5"}, "UTC")


def test_nothing_is_due_before_the_next_occurrence():
    assert due_occurrences(HOURLY_UTC, utc(2026, 1, 1, 5), utc(2026, 1, 1, 5, 59, 59)) == Due(None, [])


def test_an_occurrence_is_due_at_its_own_instant():
    assert due_occurrences(HOURLY_UTC, utc(2026, 1, 1, 5), utc(2026, 1, 1, 6)) == Due(utc(2026, 1, 1, 6), [])


def test_the_last_occurrence_run_is_not_due_again():
    assert due_occurrences(HOURLY_UTC, utc(2026, 1, 1, 6), utc(2026, 1, 1, 6, 30)).latest is None


def test_after_downtime_the_missed_occurrences_coalesce_into_the_latest_and_are_listed_as_skipped():
    due = due_occurrences(HOURLY_UTC, utc(2026, 1, 1, 1), utc(2026, 1, 1, 5, 20))
    assert due.latest == utc(2026, 1, 1, 5)
    assert due.skipped == [utc(2026, 1, 1, 2), utc(2026, 1, 1, 3), utc(2026, 1, 1, 4)]


def test_each_occurrence_is_shown_in_the_schedules_zone_and_the_viewers():
    runs = next_occurrences(DAILY_LONDON, utc(2026, 3, 28, 12), 2)
    shown = viewer_times(runs, DAILY_LONDON.zone, "America/New_York")
    assert [(view.schedule_label, view.viewer_label) for view in shown] == [
        ("Sun 29 Mar 2026, 07:30 BST (UTC+01:00)", "Sun 29 Mar 2026, 02:30 EDT (UTC-04:00)"),
        ("Mon 30 Mar 2026, 07:30 BST (UTC+01:00)", "Mon 30 Mar 2026, 02:30 EDT (UTC-04:00)"),
    ]
    assert [view.instant for view in shown] == runs


def test_a_zone_without_an_abbreviation_is_labelled_by_its_offset_alone():
    kathmandu = viewer_times([utc(2026, 1, 1)], "UTC", "Asia/Kathmandu")[0]
    assert kathmandu.viewer_label == "Thu 1 Jan 2026, 05:45 (UTC+05:45)"
    assert wall_clock_label(utc(2026, 1, 1)) == "Thu 1 Jan 2026, 00:00 UTC (UTC+00:00)"


def test_an_unknown_viewer_zone_is_refused_naming_its_field():
    with pytest.raises(ValidationError) as refused:
        viewer_times([utc(2026, 1, 1)], "UTC", "Browser/Default")
    assert refused.value.field == "viewer_zone"
