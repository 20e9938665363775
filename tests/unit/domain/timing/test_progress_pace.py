"""The pace of rows written and the time left at it (progress_pace), for files and workspace exports alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.domain.timing.progress_pace import rows_per_second, seconds_left

STARTED = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def test_the_rate_is_rows_written_over_the_seconds_since_the_start():
    assert rows_per_second(1000, STARTED, STARTED + timedelta(seconds=100)) == 10


def test_there_is_no_rate_before_a_row_is_written_or_before_the_start():
    now = STARTED + timedelta(seconds=5)
    assert rows_per_second(0, STARTED, now) is None
    assert rows_per_second(10, None, now) is None
    assert rows_per_second(10, STARTED, STARTED) is None


def test_the_time_left_is_the_rows_to_go_at_that_rate():
    assert seconds_left(1000, 3000, STARTED, STARTED + timedelta(seconds=100)) == 200


def test_there_is_no_time_left_to_tell_without_a_total():
    assert seconds_left(1000, None, STARTED, STARTED + timedelta(seconds=100)) is None


def test_rows_beyond_the_total_leave_no_time():
    assert seconds_left(3500, 3000, STARTED, STARTED + timedelta(seconds=100)) == 0
