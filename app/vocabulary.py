"""Closed vocabularies every layer shares, down to the models and the writers (which may import
neither each other nor the models), so this module sits below all of them.

`Heading`, the heading row a file starts with: its columns' names, their labels, or no heading
row. One vocabulary for the request form, the schedule form, the stored file and schedule (the
heading CHECK constraints of query_exports and schedules) and the CSV and XLSX writers.

`PackageFormat`, what a workspace package's volumes are: the settings form, the stored settings
and package (their CHECK constraints), the package writers and the manifest.
"""

from __future__ import annotations

from enum import StrEnum


class Heading(StrEnum):
    NAMES = "names"
    LABELS = "labels"
    NONE = "none"


class PackageFormat(StrEnum):
    CSV = "csv"  # one zipped RFC 4180 CSV per volume
    JSONL = "jsonl"  # one zipped JSON Lines file per volume
    PARQUET = "parquet"  # one Parquet file per volume (typed columns, zstd row groups), not zipped
