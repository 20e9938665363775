"""What the demo's dataset rows are drawn from, as data: notes and reasons people write, shift
patterns, hours and their weights, how far back the rows go, and the columns each table is written
with.
"""

from __future__ import annotations

import itertools
from datetime import time, timedelta
from decimal import Decimal

TIMESHEET_DAYS = 90
BATCH_SIZE = 10_000
# The test records' rows lie this many days back and earlier: before the last 7 days and this week.
TEST_ROWS_FROM_DAYS_AGO = 8

# Free text, mostly empty: an empty string's share of the list is the share of rows without a note.
TIMESHEET_NOTES = ("",) * 16 + (
    "Covered for a colleague",
    "Overtime agreed with the ward manager",
    "Stayed late for handover",
    "Nachtdienst übernommen",
    "交代勤務",
    "Remplacement de dernière minute",
    "Badge reader was down",
    "Training day, no patients",
)
SHIFT_NOTES = ("",) * 12 + (
    "Handover at 07:00 sharp",
    "Bank staff requested",
    "Covering sickness",
    "Fire warden on duty",
    "Nuit calme",
    "Bitte Schlüssel abgeben",
)
TIME_OFF_REASONS = {
    "annual": (
        "",
        "",
        "Family wedding in Kraków",
        "School half-term",
        "Moving house",
        "春节 with family",
        "Eid al-Fitr",
        "Hiking in the Alps",
        "Diwali",
    ),
    "sick": ("", "", "Flu", "Migraine", "Back pain", "Child is ill"),
    "parental": ("Parental leave", "Adoption leave", "Shared parental leave"),
    "unpaid": ("", "Personal reasons", "Caring for a relative", "Visa appointment abroad"),
}
TIME_OFF_KINDS = ("annual", "sick", "parental", "unpaid")
TIME_OFF_KIND_WEIGHTS = (60, 25, 4, 11)
# Working days a request of each kind lasts: (fewest, most).
TIME_OFF_LENGTHS = {"annual": (1, 10), "sick": (1, 3), "parental": (20, 60), "unpaid": (1, 5)}
# (name, start, length in minutes, unpaid break in minutes)
SHIFT_PATTERNS = (
    ("Early", time(7, 0), 8 * 60, 30),
    ("Late", time(14, 0), 8 * 60, 30),
    ("Long day", time(7, 30), 12 * 60 + 30, 60),
    ("Night", time(20, 45), 10 * 60, 45),
)
# Hours to the quarter hour, weighted towards ordinary shift lengths.
HOURS = tuple(Decimal(h) for h in ("7.50", "8.00", "12.00", "4.00", "6.25", "10.00", "11.50", "2.75", "0.25"))
HOURS_CUM_WEIGHTS = tuple(itertools.accumulate((30, 25, 15, 10, 6, 6, 5, 2, 1)))
# How long after the end of the work day an entry is typically recorded.
RECORD_DELAYS = tuple(timedelta(hours=17, minutes=m) for m in range(0, 24 * 60, 7))

# Every dataset row starts with its workspace and the worker's ids, with their denormalised names.
WORKER_COLUMNS = ("workspace_id", "team_id", "team_name", "person_id", "person_name")
SHIFT_COLUMNS = (*WORKER_COLUMNS, "role", "starts_at", "ends_at", "break_minutes", "notes")
TIME_OFF_COLUMNS = (
    *WORKER_COLUMNS,
    "kind",
    "status",
    "starts_on",
    "ends_on",
    "days",
    "reason",
    "submitted_at",
)
TIMESHEET_COLUMNS = (
    *WORKER_COLUMNS,
    "work_date",
    "hours",
    "project",
    "approved",
    "note",
    "recorded_at",
)
