"""The packages suite's line for the CSV package against psql | gzip: the issue's fields, the
ratio of the two times, and the anchor's memory counted over the processes it started."""

from __future__ import annotations

from bench.packages import native_anchor_line
from bench.run_all import Measurement


def test_the_csv_package_is_set_against_its_own_copy_statements_through_psql_and_gzip():
    package = Measurement(seconds=12.346, peak_rss_mb=140.04, work_peak_rss_mb=139.0, bytes=85_000_000)
    native = Measurement(
        seconds=9.5,
        peak_rss_mb=33.8,
        work_peak_rss_mb=33.8,
        bytes=82_000_000,
        children=2,
        children_peak_rss_mb=11.2,
    )

    line = native_anchor_line(5_000_000, package, native)

    assert line == {
        "name": "package_csv",
        "rows": 5_000_000,
        "seconds": 12.35,
        "peak_rss_mb": 140.0,
        "anchor": "psql_copy_gzip",
        "anchor_seconds": 9.5,
        "ratio": 1.3,
        "anchor_peak_rss_mb": 45.0,
        "bytes": 85_000_000,
        "anchor_bytes": 82_000_000,
    }
