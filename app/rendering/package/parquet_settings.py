"""How Parquet volumes are written, and the conventions a Parquet manifest states: apart from the
writer (app/rendering/package/parquet_volumes.py) so that reading them loads no pyarrow, which
costs a process about 50 MB that a CSV or JSON Lines package has no use for."""

from __future__ import annotations

ROW_GROUP_ROWS = 65_536
COMPRESSION = "zstd"
COMPRESSION_LEVEL = 3
# The column a package's rows are written in the order of (app/data/package_snapshot.py).
ROW_ORDER_COLUMN = "id"
DELTA_ENCODING = "DELTA_BINARY_PACKED"

PARQUET_CONVENTIONS = {
    "encoding": "UTF-8 strings",
    "integers": "int16 / int32 / int64, the width the table stores",
    "decimals": "decimal128 with the declared precision and scale (exact)",
    "timestamps": "timestamp, microseconds, adjusted to UTC",
    "dates": "date (days since 1970-01-01)",
    "booleans": "boolean",
    "null": "a null value (every column is optional)",
    "compression": f"{COMPRESSION}, level {COMPRESSION_LEVEL}",
    "encodings": f"{ROW_ORDER_COLUMN} and timestamps {DELTA_ENCODING}; every other column dictionary-encoded "
    "(plain where its dictionary outgrows a page)",
    "row_groups": f"at most {ROW_GROUP_ROWS} rows each",
}
