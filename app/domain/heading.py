"""The heading row a file starts with: its columns' names, their labels, or no heading row.

One vocabulary for the request form, the schedule form, the stored file and schedule (the
heading CHECK constraints of query_exports and schedules) and the CSV and XLSX writers, which
may not import the models.
"""

from __future__ import annotations

from enum import StrEnum


class Heading(StrEnum):
    NAMES = "names"
    LABELS = "labels"
    NONE = "none"
