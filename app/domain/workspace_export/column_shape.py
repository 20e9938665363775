"""A packaged column as stored: its catalog type and the widths a typed format needs.

The coverage declaration names each column's catalog type only (`integer`, `decimal`, …: its
content hash covers those). A Parquet volume also needs what the table declares: an integer's
width, a decimal's precision and scale. The data layer reads them from the table
(app/data/package_snapshot.py) and the Parquet writer maps them (app/rendering/package).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ColumnShape:
    name: str
    type: str  # a catalog type (app/domain/sources/catalog.py COLUMN_TYPES)
    bits: int | None = None  # integers: 16, 32 or 64
    precision: int | None = None  # decimals: total digits
    scale: int | None = None  # decimals: digits after the point
