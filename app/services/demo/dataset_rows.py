"""The rows of the demo's datasets (shifts, time off, timesheet entries), as tuples in the order of
data_rows.py's columns: drawn from the seeded generator for a workspace's employees, and one per
hostile value for its test records. Nothing here touches the database.

The test records' rows lie before what the starter queries open with (the last 7 days, this
week, pending requests), one day per hostile value going back from TEST_ROWS_FROM_DAYS_AGO days
ago, so lists and first previews show ordinary data.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from app.seed_data import HOSTILE_VALUES
from app.services.demo.data_rows import (
    BATCH_SIZE,
    HOURS,
    HOURS_CUM_WEIGHTS,
    RECORD_DELAYS,
    SHIFT_COLUMNS,
    SHIFT_NOTES,
    SHIFT_PATTERNS,
    TEST_ROWS_FROM_DAYS_AGO,
    TIME_OFF_COLUMNS,
    TIME_OFF_KIND_WEIGHTS,
    TIME_OFF_KINDS,
    TIME_OFF_LENGTHS,
    TIME_OFF_REASONS,
    TIMESHEET_DAYS,
    TIMESHEET_NOTES,
)

_ONE_DAY = timedelta(days=1)


@dataclass(frozen=True)
class Worker:
    """An employee as the dataset rows carry them: ids with their denormalised names."""

    team_id: int
    team_name: str
    person_id: int
    person_name: str
    job_title: str

    def row(self, workspace_id: int, *values: object) -> tuple:
        """A row of this worker's: the WORKER_COLUMNS, then `values`."""
        return (workspace_id, self.team_id, self.team_name, self.person_id, self.person_name, *values)


def _test_records_by_day(records: list[Worker], today: date) -> Iterator[tuple[int, Worker, date, str]]:
    """Each hostile value (and its position) with the test record whose row carries it, in turn,
    and the row's day; nothing when there are no test records."""
    if not records:
        return
    for k, value in enumerate(HOSTILE_VALUES):
        yield k, records[k % len(records)], today - timedelta(days=TEST_ROWS_FROM_DAYS_AGO + k), value


def shift_rows_of_test_records(workspace_id: int, records: list[Worker], today: date) -> list[tuple]:
    """One past shift per hostile value, in its notes."""
    rows = []
    for _k, record, day, value in _test_records_by_day(records, today):
        starts_at = datetime.combine(day, time(9, 0), UTC)
        rows.append(record.row(workspace_id, record.job_title, starts_at, starts_at + timedelta(hours=8), 30, value))
    return rows


def time_off_rows_of_test_records(workspace_id: int, records: list[Worker], today: date) -> list[tuple]:
    """One past, decided day off per hostile value, as its reason (never pending, so never in the
    starter "Pending time off")."""
    return [
        record.row(
            workspace_id,
            "annual",
            "approved" if k % 4 else "declined",
            day,
            day,
            Decimal(1),
            value,
            datetime.combine(day - timedelta(days=14), time(10, 0), UTC),
        )
        for k, record, day, value in _test_records_by_day(records, today)
    ]


def timesheet_rows_of_test_records(workspace_id: int, records: list[Worker], count: int, today: date) -> list[tuple]:
    """The first `count` hostile values as approved entries of the test records, each in the note
    and (cut to the column's 200 characters) the project."""
    first = itertools.islice(_test_records_by_day(records, today), count)
    recorded = time(17, 30)
    return [
        record.row(workspace_id, day, Decimal("7.50"), value[:200], True, value, datetime.combine(day, recorded, UTC))
        for _k, record, day, value in first
    ]


def shift_rows(rng: random.Random, workspace_id: int, workers: list[Worker], today: date) -> list[tuple]:
    """About five shifts a week per active employee, from four weeks ago to two weeks ahead."""
    rows = []
    for worker in workers:
        for offset in range(-28, 14):
            if rng.random() >= 0.68:
                continue
            _pattern, start, minutes, break_minutes = rng.choice(SHIFT_PATTERNS)
            starts_at = datetime.combine(today + timedelta(days=offset), start, UTC)
            role = worker.job_title if rng.random() >= 0.08 else f"{worker.job_title} (acting lead)"
            ends_at = starts_at + timedelta(minutes=minutes)
            rows.append(worker.row(workspace_id, role, starts_at, ends_at, break_minutes, rng.choice(SHIFT_NOTES)))
    rows.sort(key=lambda row: row[SHIFT_COLUMNS.index("starts_at")])
    return rows


def _working_days_from(first: date, count: int) -> date:
    """The last day of `count` working days (Monday to Friday) starting on `first`."""
    day, left = first, count - 1
    while left:
        day += timedelta(days=1)
        if day.weekday() < 5:
            left -= 1
    return day


def time_off_rows(rng: random.Random, workspace_id: int, workers: list[Worker], now: datetime) -> list[tuple]:
    """One to four requests per active employee, from four months ago to three months ahead."""
    today = now.date()
    rows = []
    for worker in workers:
        for _request in range(rng.randint(1, 4)):
            kind = rng.choices(TIME_OFF_KINDS, weights=TIME_OFF_KIND_WEIGHTS)[0]
            # Sickness is reported on the day, so it lies in the past; other leave is booked ahead.
            starts_on = today + timedelta(days=rng.randint(-120, 0 if kind == "sick" else 90))
            while starts_on.weekday() >= 5:
                starts_on -= timedelta(days=1)
            working_days = rng.randint(*TIME_OFF_LENGTHS[kind])
            half_day = kind == "annual" and working_days == 1 and rng.random() < 0.3
            days = Decimal("0.5") if half_day else Decimal(working_days)
            if kind == "sick":
                status = "approved"
                submitted_at = datetime.combine(starts_on, time(6, rng.randrange(60)), UTC)
            else:
                upcoming = starts_on > today
                status = rng.choices(
                    ("pending", "approved", "declined"), weights=(45, 45, 10) if upcoming else (0, 85, 15)
                )[0]
                asked_on = starts_on - timedelta(days=rng.randint(5, 60))
                submitted_at = datetime.combine(asked_on, time(rng.randint(8, 20), rng.randrange(60)), UTC)
            submitted_at = min(submitted_at, now - timedelta(hours=rng.randint(1, 72)))
            rows.append(
                worker.row(
                    workspace_id,
                    kind,
                    status,
                    starts_on,
                    _working_days_from(starts_on, working_days),
                    days,
                    rng.choice(TIME_OFF_REASONS[kind]),
                    submitted_at,
                )
            )
    rows.sort(key=lambda row: row[TIME_OFF_COLUMNS.index("submitted_at")])
    return rows


def timesheet_batches(
    rng: random.Random, workspace_id: int, workers: list[Worker], projects: Sequence[str], count: int, now: datetime
) -> Iterator[list[tuple]]:
    """`count` entries in date order over the last TIMESHEET_DAYS days up to today, BATCH_SIZE at a time."""
    first_day = now.date() - timedelta(days=TIMESHEET_DAYS - 1)
    days = [first_day + timedelta(days=d) for d in range(TIMESHEET_DAYS)]
    midnights = [datetime.combine(day, time(), UTC) for day in days]
    last_week = TIMESHEET_DAYS - 7
    for start in range(0, count, BATCH_SIZE):
        size = min(BATCH_SIZE, count - start)
        crew = rng.choices(workers, k=size)
        hours = rng.choices(HOURS, cum_weights=HOURS_CUM_WEIGHTS, k=size)
        booked = rng.choices(projects, k=size)
        notes = rng.choices(TIMESHEET_NOTES, k=size)
        delays = rng.choices(RECORD_DELAYS, k=size)
        batch = []
        for k in range(size):
            d = (start + k) * TIMESHEET_DAYS // count
            # Recent entries still wait for a manager; older ones are nearly all approved.
            approved = rng.random() < (0.97 if d < last_week else 0.7)
            recorded_at = midnights[d] + delays[k]
            if recorded_at > now:
                # Work of the last day or two is recorded some time between its start and now
                # (drawn from the delay, so the time of day never changes the random sequence).
                recorded_at = midnights[d] + (now - midnights[d]) * ((delays[k] - RECORD_DELAYS[0]) / _ONE_DAY)
            batch.append(crew[k].row(workspace_id, days[d], hours[k], booked[k], approved, notes[k], recorded_at))
        yield batch
