"""Closed vocabularies every layer shares, down to the models and the writers (which may import
neither each other nor the models), so this module sits below all of them.

`Heading`, the heading row a file starts with: its columns' names, their labels, or no heading
row. One vocabulary for the request form, the schedule form, the stored file and schedule (the
heading CHECK constraints of query_exports and schedules) and the CSV and XLSX writers.
"""

from __future__ import annotations

from enum import StrEnum


class Heading(StrEnum):
    NAMES = "names"
    LABELS = "labels"
    NONE = "none"
