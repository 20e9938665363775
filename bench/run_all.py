"""`make bench`: export benchmarks against their anchors, one JSON object per line on stdout.

Builds (or reuses) the benchmark database, then at two sizes — BENCH_ROWS (default 1,000,000)
and a tenth of it — measures, each in its own process:

    copy_csv                     COPY (select) TO STDOUT WITH CSV, the anchor for CSV
    csv_export                   the real job path producing a CSV file
    xlsxwriter_constant_memory   XlsxWriter constant_memory over a server-side cursor, the anchor for XLSX
    xlsx_export                  the real job path producing an XLSX file

and prints, per format and size, {"name", "rows", "seconds", "peak_rss_mb", "anchor",
"anchor_seconds", "ratio"}; then the peak-RSS growth from the small to the large run; then one
line per target with its limit and whether it passed. BENCH_REPEAT (default 1) runs every case
that many times, alternating anchor and export, and keeps the fastest time and highest peak.
Progress goes to stderr. The exit status is 0 whenever the measurements ran: the targets are
reported, not enforced, because timings on a shared machine are noisy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.cases import Plan, plan_for
from bench.dataset import (
    bench_environment,
    create_bench_app,
    database_url,
    ensure_database,
    prepare_schema,
    prepare_workspace,
)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ROWS = 1_000_000
# An XLSX sheet holds 1,048,576 rows; the heading takes one.
MAX_ROWS = 1_048_575

FORMATS = {
    "csv": {"export": "csv_export", "anchor": "copy_csv", "max_ratio": 1.5},
    "xlsx": {"export": "xlsx_export", "anchor": "xlsxwriter_constant_memory", "max_ratio": 1.0},
}
MAX_PEAK_RSS_MB = 150.0
MAX_RSS_GROWTH_PCT = 20.0


@dataclass(frozen=True)
class Measurement:
    seconds: float
    peak_rss_mb: float
    # The measured work's own peak, start-up left out; None where the kernel cannot reset the mark.
    work_peak_rss_mb: float | None
    bytes: int


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _emit(record: dict) -> None:
    print(json.dumps(record, ensure_ascii=False), flush=True)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


def run_case(case: str, plan: Plan, scratch_root: Path) -> Measurement:
    """One case in a fresh interpreter; its scratch folder is removed as soon as it ends."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{case}-", dir=scratch_root))
    env = {**os.environ, **bench_environment((scratch / "storage").as_uri())}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bench.cases", case, plan.to_json(), str(scratch)],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"bench case {case} at {plan.rows:,} rows failed (exit status {done.returncode})")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    work_peak = result["work_peak_rss_mb"]
    _log(
        f"  {case:<28} {plan.rows:>9,} rows  {result['seconds']:8.2f} s  peak {result['peak_rss_mb']:6.1f} MB"
        + ("" if work_peak is None else f" (work {work_peak:6.1f} MB)")
    )
    return Measurement(result["seconds"], result["peak_rss_mb"], result["work_peak_rss_mb"], result["bytes"])


def best_of(measurements: list[Measurement]) -> Measurement:
    """The fastest time and the highest peak: noise from other work only ever adds to either."""
    work_peaks = [m.work_peak_rss_mb for m in measurements]
    return Measurement(
        seconds=min(m.seconds for m in measurements),
        peak_rss_mb=max(m.peak_rss_mb for m in measurements),
        work_peak_rss_mb=None if None in work_peaks else max(work_peaks),
        bytes=measurements[-1].bytes,
    )


def _mb(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def compare(file_format: str, plan: Plan, scratch_root: Path, repeat: int) -> dict:
    cases = FORMATS[file_format]
    anchors, exports = [], []
    for _ in range(repeat):
        anchors.append(run_case(cases["anchor"], plan, scratch_root))
        exports.append(run_case(cases["export"], plan, scratch_root))
    anchor, export = best_of(anchors), best_of(exports)
    return {
        "name": cases["export"],
        "rows": plan.rows,
        "seconds": round(export.seconds, 2),
        "peak_rss_mb": round(export.peak_rss_mb, 1),
        "anchor": cases["anchor"],
        "anchor_seconds": round(anchor.seconds, 2),
        "ratio": round(export.seconds / anchor.seconds, 2),
        "job_peak_rss_mb": _mb(export.work_peak_rss_mb),
        "anchor_peak_rss_mb": round(anchor.peak_rss_mb, 1),
        "bytes": export.bytes,
        "anchor_bytes": anchor.bytes,
    }


def _growth_pct(small: float | None, large: float | None) -> float | None:
    return None if small is None or large is None else round((large - small) * 100 / small, 1)


def growth(file_format: str, small: dict, large: dict) -> dict:
    """How much higher the export's peak is at the large size than at the small one."""
    return {
        "name": f"{file_format}_rss_growth",
        "small_rows": small["rows"],
        "large_rows": large["rows"],
        "small_peak_rss_mb": small["peak_rss_mb"],
        "large_peak_rss_mb": large["peak_rss_mb"],
        "growth_pct": _growth_pct(small["peak_rss_mb"], large["peak_rss_mb"]),
        "small_job_peak_rss_mb": small["job_peak_rss_mb"],
        "large_job_peak_rss_mb": large["job_peak_rss_mb"],
        "job_growth_pct": _growth_pct(small["job_peak_rss_mb"], large["job_peak_rss_mb"]),
    }


def targets(results: dict[str, dict], growths: dict[str, dict]) -> list[dict]:
    """The issue's targets, each with the measured value, its limit and whether it passed."""
    lines = []
    for file_format, cases in FORMATS.items():
        large = results[file_format]
        lines += [
            {"name": f"target_{file_format}_ratio", "value": large["ratio"], "limit": cases["max_ratio"],
             "pass": large["ratio"] <= cases["max_ratio"]},
            {"name": f"target_{file_format}_peak_rss_mb", "value": large["peak_rss_mb"], "limit": MAX_PEAK_RSS_MB,
             "pass": large["peak_rss_mb"] < MAX_PEAK_RSS_MB},
            {"name": f"target_{file_format}_rss_growth_pct", "value": growths[file_format]["growth_pct"],
             "limit": MAX_RSS_GROWTH_PCT, "pass": growths[file_format]["growth_pct"] <= MAX_RSS_GROWTH_PCT},
        ]
    return lines


def main() -> None:
    large_rows = _env_int("BENCH_ROWS", DEFAULT_ROWS)
    repeat = _env_int("BENCH_REPEAT", 1)
    if not 10 <= large_rows <= MAX_ROWS:
        raise SystemExit(f"BENCH_ROWS must be between 10 and {MAX_ROWS:,} (one XLSX sheet), not {large_rows:,}")
    if repeat < 1:
        raise SystemExit("BENCH_REPEAT must be at least 1")
    small_rows = large_rows // 10

    with tempfile.TemporaryDirectory(prefix="rhythm-bench-") as scratch_name:
        scratch_root = Path(scratch_name)
        _log(f"benchmark database {database_url()}")
        ensure_database(database_url())
        app = create_bench_app((scratch_root / "storage").as_uri())
        prepare_schema(app)
        plans = {}
        for rows in (small_rows, large_rows):
            bench, built = prepare_workspace(app, rows)
            _log(f"  dataset of {rows:,} timesheet entries {'built' if built else 'reused'}")
            with app.app_context():
                plans[rows] = plan_for(bench)

        results: dict[int, dict[str, dict]] = {small_rows: {}, large_rows: {}}
        for rows in (small_rows, large_rows):
            for file_format in FORMATS:
                result = compare(file_format, plans[rows], scratch_root, repeat)
                results[rows][file_format] = result
                _emit(result)

    growths = {f: growth(f, results[small_rows][f], results[large_rows][f]) for f in FORMATS}
    for line in growths.values():
        _emit(line)
    for line in targets(results[large_rows], growths):
        _emit(line)


if __name__ == "__main__":
    main()
