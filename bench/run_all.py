"""`make bench`: export benchmarks against their anchors, one JSON object per line on stdout.

Builds (or reuses) the benchmark database, then runs the suites BENCH_SUITES names
(comma-separated; default "imports,query,report"), every case in its own process.

The imports suite (bench/job_imports.py): what each kind of job holds once loaded, one
{"name": "job_import_rss", "kind", "rss_mb", "modules"} line per kind.

The query suite, at two sizes — BENCH_ROWS (default 1,000,000) and a tenth of it:

    copy_csv                     COPY of the plain columns TO STDOUT WITH CSV (shown beside the target)
    copy_csv_same_select         COPY of exactly the select the CSV export runs, the anchor for CSV
    csv_export                   the real job path producing a CSV file
    xlsxwriter_constant_memory   XlsxWriter constant_memory over a server-side cursor, the anchor for XLSX
    xlsx_export                  the real job path producing an XLSX file

and prints, per format and size, {"name", "rows", "seconds", "peak_rss_mb", "anchor",
"anchor_seconds", "ratio"} (the CSV line also "plain_anchor_seconds" and "plain_ratio"); then
the peak-RSS growth from the small to the large run; then its targets.

The report suite: the same `table` report (eight columns) as a PDF through the real job path at
1,000, 5,000 and 20,000 rows, each next to its anchor measured in the same run: the same rows
drawn with the same fonts on a bare reportlab canvas (`reportlab_canvas`); the same JSON lines
with "rows_per_second", "seconds_per_row", "bytes" and "anchor_bytes"; then its targets.

The recipients suite: one schedule run as each of 50 recipients over 10 distinct accesses beside
the same run for one recipient, 100,000 rows ({"name", "recipients", "distinct_access", "rows",
"seconds", "peak_rss_mb"} each), then the time ratio and the peak-RSS growth as targets.

Target lines carry the measured value, the limit, whether the limit is a maximum or a minimum,
and whether it passed. BENCH_REPEAT (default 1) runs every case that many times, alternating
anchors and exports, and keeps the fastest time and the highest peak. Progress goes to stderr.
The exit status is 0 whenever the measurements ran: the targets are reported, not enforced,
because timings on a shared machine are noisy.
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

from flask import Flask

from bench.cases import (
    PER_RECIPIENT_DISTINCT_ACCESS,
    PER_RECIPIENT_RECIPIENTS,
    Plan,
    ReportPlan,
    plan_for,
    report_plan_for,
)
from bench.console import console_suite
from bench.dataset import (
    bench_environment,
    create_bench_app,
    database_url,
    ensure_database,
    prepare_reports,
    prepare_schema,
    prepare_workspace,
)
from bench.job_imports import job_imports_suite
from bench.latency import latency_suite
from bench.load import load_suite
from bench.packages import packages_suite
from bench.schedule_throughput import throughput_suite
from bench.schedules import schedule_suite

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SUITES = (
    "imports",
    "query",
    "report",
    "schedules",
    "throughput",
    "recipients",
    "latency",
    "console",
    "packages",
    "load",
)
# What each job loads, and the export suites; schedules, throughput, recipients, latency, console,
# packages (5M rows) and load run when named.
DEFAULT_SUITES = ("imports", "query", "report")

# The query suite.
DEFAULT_ROWS = 1_000_000
# An XLSX sheet holds 1,048,576 rows; the heading takes one.
MAX_ROWS = 1_048_575
# Issue 31's targets (issue 2's were 1.5 ×, 1.0 × and 150 MB for both).
FORMATS = {
    "csv": {
        "export": "csv_export",
        "anchor": "copy_csv_same_select",
        "plain_anchor": "copy_csv",
        "max_ratio": 1.1,
        "max_peak_rss_mb": 120.0,
    },
    "xlsx": {
        "export": "xlsx_export",
        "anchor": "xlsxwriter_constant_memory",
        "max_ratio": 0.5,
        "max_peak_rss_mb": 135.0,
    },
}
MAX_RSS_GROWTH_PCT = 20.0

# The report suite: the reports read the first rows (in id order) of one workspace of this size.
REPORT_DATASET_ROWS = 20_000
REPORT_ROWS = (1_000, 5_000, 20_000)
# Issue 31's targets (issue 7's were 2.0 × and 200 MB).
MAX_REPORT_RATIO = 1.3
MAX_SECONDS_PER_ROW_GROWTH = 1.2
MAX_REPORT_PEAK_RSS_MB = 155.0
MAX_REPORT_BYTES_RATIO = 1.3


@dataclass(frozen=True)
class Measurement:
    seconds: float
    # The case's own process, start-up included.
    peak_rss_mb: float
    # The measured work's own peak, start-up left out; None where the kernel cannot reset the mark.
    work_peak_rss_mb: float | None
    bytes: int
    # Processes the work started (a PDF's rendering processes): how many, the sum of their
    # peaks, and the highest sum of resident sets seen at one moment, the case's process included.
    children: int = 0
    children_peak_rss_mb: float = 0.0
    children_peaks_rss_mb: tuple[float, ...] = ()
    concurrent_peak_rss_mb: float | None = None

    @property
    def total_peak_rss_mb(self) -> float:
        """The process's peak plus each child's: at least what the work needed at any one time."""
        return self.peak_rss_mb + self.children_peak_rss_mb


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _emit(record: dict) -> None:
    print(json.dumps(record, ensure_ascii=False), flush=True)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


def _suites() -> list[str]:
    raw = os.environ.get("BENCH_SUITES") or ",".join(DEFAULT_SUITES)
    chosen = [name.strip() for name in raw.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SUITES))
    if unknown or not chosen:
        raise SystemExit(f"BENCH_SUITES names suites from {', '.join(SUITES)}, not {raw!r}")
    return [name for name in SUITES if name in chosen]


def run_case(case: str, plan: Plan | ReportPlan, scratch_root: Path) -> Measurement:
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
    measurement = Measurement(
        seconds=result["seconds"],
        peak_rss_mb=result["peak_rss_mb"],
        work_peak_rss_mb=result["work_peak_rss_mb"],
        bytes=result["bytes"],
        children=result["children"],
        children_peak_rss_mb=result["children_peak_rss_mb"],
        children_peaks_rss_mb=tuple(result["children_peaks_rss_mb"]),
        concurrent_peak_rss_mb=result["concurrent_peak_rss_mb"],
    )
    work_peak = measurement.work_peak_rss_mb
    _log(
        f"  {case:<28} {plan.rows:>9,} rows  {measurement.seconds:8.2f} s  peak {measurement.peak_rss_mb:6.1f} MB"
        + ("" if work_peak is None else f" (work {work_peak:6.1f} MB)")
        + (
            f" + {measurement.children} children {measurement.children_peak_rss_mb:6.1f} MB"
            if measurement.children
            else ""
        )
    )
    return measurement


def best_of(measurements: list[Measurement]) -> Measurement:
    """The fastest time and the highest peaks: noise from other work only ever adds to either."""
    work_peaks = [m.work_peak_rss_mb for m in measurements]
    concurrent = [m.concurrent_peak_rss_mb for m in measurements]
    most_children = max(measurements, key=lambda m: m.children_peak_rss_mb)
    return Measurement(
        seconds=min(m.seconds for m in measurements),
        peak_rss_mb=max(m.peak_rss_mb for m in measurements),
        work_peak_rss_mb=None if None in work_peaks else max(work_peaks),
        bytes=measurements[-1].bytes,
        children=max(m.children for m in measurements),
        children_peak_rss_mb=most_children.children_peak_rss_mb,
        children_peaks_rss_mb=most_children.children_peaks_rss_mb,
        concurrent_peak_rss_mb=None if None in concurrent else max(concurrent),
    )


def _mb(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _target(name: str, value: float, limit: float, bound: str, **extra) -> dict:
    """One target line; `bound` says whether the limit is a "max" or a "min"."""
    passed = value <= limit if bound == "max" else value >= limit
    return {"name": name, "value": value, "limit": limit, "bound": bound, **extra, "pass": passed}


# --------------------------------------------------------------------------- query suite


def compare(file_format: str, plan: Plan, scratch_root: Path, repeat: int) -> dict:
    cases = FORMATS[file_format]
    plain_anchor_case = cases.get("plain_anchor")
    plain_anchors, anchors, exports = [], [], []
    for _ in range(repeat):
        if plain_anchor_case:
            plain_anchors.append(run_case(plain_anchor_case, plan, scratch_root))
        anchors.append(run_case(cases["anchor"], plan, scratch_root))
        exports.append(run_case(cases["export"], plan, scratch_root))
    anchor, export = best_of(anchors), best_of(exports)
    line = {
        "name": cases["export"],
        "rows": plan.rows,
        "seconds": round(export.seconds, 2),
        "peak_rss_mb": round(export.peak_rss_mb, 1),
        "anchor": cases["anchor"],
        "anchor_seconds": round(anchor.seconds, 2),
        "ratio": round(export.seconds / anchor.seconds, 2),
    }
    if plain_anchor_case:
        plain = best_of(plain_anchors)
        line |= {
            "plain_anchor": plain_anchor_case,
            "plain_anchor_seconds": round(plain.seconds, 2),
            "plain_ratio": round(export.seconds / plain.seconds, 2),
        }
    return line | {
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


def query_targets(results: dict[str, dict], growths: dict[str, dict]) -> list[dict]:
    """Issue 2's targets as issue 31 raised them, each with the measured value, its limit and whether it passed."""
    lines = []
    for file_format, cases in FORMATS.items():
        large = results[file_format]
        lines += [
            _target(f"target_{file_format}_ratio", large["ratio"], cases["max_ratio"], "max", anchor=cases["anchor"]),
            _target(f"target_{file_format}_peak_rss_mb", large["peak_rss_mb"], cases["max_peak_rss_mb"], "max"),
            _target(
                f"target_{file_format}_rss_growth_pct", growths[file_format]["growth_pct"], MAX_RSS_GROWTH_PCT, "max"
            ),
        ]
    return lines


def query_suite(app: Flask, scratch_root: Path, repeat: int) -> None:
    large_rows = _env_int("BENCH_ROWS", DEFAULT_ROWS)
    if not 10 <= large_rows <= MAX_ROWS:
        raise SystemExit(f"BENCH_ROWS must be between 10 and {MAX_ROWS:,} (one XLSX sheet), not {large_rows:,}")
    small_rows = large_rows // 10
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
    for line in query_targets(results[large_rows], growths):
        _emit(line)


# --------------------------------------------------------------------------- report suite


def _per_row(seconds: float, rows: int) -> dict:
    return {"rows_per_second": round(rows / seconds, 1), "seconds_per_row": round(seconds / rows, 6)}


def anchor_line(rows: int, anchor: Measurement) -> dict:
    return {
        "name": "reportlab_canvas",
        "rows": rows,
        "seconds": round(anchor.seconds, 2),
        "peak_rss_mb": round(anchor.peak_rss_mb, 1),
        **_per_row(anchor.seconds, rows),
        "work_peak_rss_mb": _mb(anchor.work_peak_rss_mb),
        "bytes": anchor.bytes,
    }


def report_line(rows: int, export: Measurement, anchor: Measurement) -> dict:
    """The report at `rows` against the bare canvas drawing the same rows in the same run."""
    return {
        "name": "report_pdf",
        "rows": rows,
        "seconds": round(export.seconds, 2),
        "peak_rss_mb": round(export.total_peak_rss_mb, 1),
        "anchor": "reportlab_canvas",
        "anchor_seconds": round(anchor.seconds, 2),
        "ratio": round(export.seconds / anchor.seconds, 2),
        **_per_row(export.seconds, rows),
        "bytes": export.bytes,
        "anchor_bytes": anchor.bytes,
        "bytes_ratio": round(export.bytes / anchor.bytes, 2),
        "parent_peak_rss_mb": round(export.peak_rss_mb, 1),
        "children": export.children,
        "children_peak_rss_mb": round(export.children_peak_rss_mb, 1),
        "job_peak_rss_mb": _mb(export.work_peak_rss_mb),
        "anchor_peak_rss_mb": round(anchor.peak_rss_mb, 1),
    }


def report_targets(lines: dict[int, dict]) -> list[dict]:
    """Issue 7's targets as issue 31 raised them, each with the measured value, its limit and whether it passed."""
    smallest, largest = lines[min(REPORT_ROWS)], lines[max(REPORT_ROWS)]
    return [
        _target(
            "target_report_ratio",
            largest["ratio"],
            MAX_REPORT_RATIO,
            "max",
            rows=largest["rows"],
            anchor="reportlab_canvas",
        ),
        _target(
            "target_report_seconds_per_row_growth",
            round(largest["seconds_per_row"] / smallest["seconds_per_row"], 2),
            MAX_SECONDS_PER_ROW_GROWTH,
            "max",
            rows=[smallest["rows"], largest["rows"]],
        ),
        _target(
            "target_report_peak_rss_mb",
            max(line["peak_rss_mb"] for line in lines.values()),
            MAX_REPORT_PEAK_RSS_MB,
            "max",
            rows=sorted(lines),
        ),
        _target(
            "target_report_bytes_ratio", largest["bytes_ratio"], MAX_REPORT_BYTES_RATIO, "max", rows=largest["rows"]
        ),
    ]


def report_suite(app: Flask, scratch_root: Path, repeat: int) -> None:
    bench, built = prepare_workspace(app, REPORT_DATASET_ROWS)
    _log(f"  dataset of {REPORT_DATASET_ROWS:,} timesheet entries {'built' if built else 'reused'}")
    report_ids = prepare_reports(app, bench, REPORT_ROWS)
    with app.app_context():
        plans = {rows: report_plan_for(bench, report_ids[rows], rows) for rows in REPORT_ROWS}

    anchor_runs: dict[int, list[Measurement]] = {rows: [] for rows in REPORT_ROWS}
    report_runs: dict[int, list[Measurement]] = {rows: [] for rows in REPORT_ROWS}
    for _ in range(repeat):
        for rows in REPORT_ROWS:
            anchor_runs[rows].append(run_case("reportlab_canvas", plans[rows], scratch_root))
            report_runs[rows].append(run_case("report_pdf", plans[rows], scratch_root))

    anchors = {rows: best_of(runs) for rows, runs in anchor_runs.items()}
    for rows, anchor in anchors.items():
        _emit(anchor_line(rows, anchor))
    lines = {rows: report_line(rows, best_of(runs), anchors[rows]) for rows, runs in report_runs.items()}
    for line in lines.values():
        _emit(line)
    for line in report_targets(lines):
        _emit(line)


# --------------------------------------------------------------------------- recipients suite

RECIPIENT_ROWS = 100_000
# Ten files are made where one was: the run may take ten and a half times as long, in the same memory.
MAX_PER_RECIPIENT_RATIO = 10.5
MAX_PER_RECIPIENT_RSS_GROWTH_PCT = 10.0


def recipients_suite(app: Flask, scratch_root: Path, repeat: int) -> None:
    """One schedule run as 50 recipients over 10 distinct accesses, beside the same run for one."""
    bench, built = prepare_workspace(app, RECIPIENT_ROWS)
    _log(f"  dataset of {RECIPIENT_ROWS:,} timesheet entries {'built' if built else 'reused'}")
    with app.app_context():
        plan = plan_for(bench)
    one = best_of([run_case("schedule_run_one_recipient", plan, scratch_root) for _ in range(repeat)])
    many = best_of([run_case("schedule_run_per_recipient", plan, scratch_root) for _ in range(repeat)])
    _emit(
        {
            "name": "schedule_run_one_recipient",
            "recipients": 1,
            "distinct_access": 1,
            "rows": RECIPIENT_ROWS,
            "seconds": round(one.seconds, 2),
            "peak_rss_mb": round(one.peak_rss_mb, 1),
        }
    )
    _emit(
        {
            "name": "schedule_run_per_recipient",
            "recipients": PER_RECIPIENT_RECIPIENTS,
            "distinct_access": PER_RECIPIENT_DISTINCT_ACCESS,
            "rows": RECIPIENT_ROWS,
            "seconds": round(many.seconds, 2),
            "peak_rss_mb": round(many.peak_rss_mb, 1),
        }
    )
    _emit(_target("schedule_run_per_recipient_time_ratio", many.seconds / one.seconds, MAX_PER_RECIPIENT_RATIO, "max"))
    growth = (many.peak_rss_mb - one.peak_rss_mb) * 100 / one.peak_rss_mb
    _emit(_target("schedule_run_per_recipient_rss_growth_pct", growth, MAX_PER_RECIPIENT_RSS_GROWTH_PCT, "max"))


def main() -> None:
    suites = _suites()
    repeat = _env_int("BENCH_REPEAT", 1)
    if repeat < 1:
        raise SystemExit("BENCH_REPEAT must be at least 1")

    with tempfile.TemporaryDirectory(prefix="rhythm-bench-") as scratch_name:
        scratch_root = Path(scratch_name)
        _log(f"benchmark database {database_url()}; suites {', '.join(suites)}")
        ensure_database(database_url())
        app = create_bench_app((scratch_root / "storage").as_uri())
        prepare_schema(app)
        if "imports" in suites:
            for line in job_imports_suite(bench_environment((scratch_root / "storage").as_uri())):
                _emit(line)
        if "query" in suites:
            query_suite(app, scratch_root, repeat)
        if "report" in suites:
            report_suite(app, scratch_root, repeat)
        if "schedules" in suites:
            schedule_suite(app)
        if "throughput" in suites:
            throughput_suite(app, scratch_root)
        if "recipients" in suites:
            recipients_suite(app, scratch_root, repeat)
        if "latency" in suites:
            latency_suite(app, scratch_root)
        if "console" in suites:
            console_suite(app, scratch_root)
        if "packages" in suites:
            packages_suite(app, scratch_root, repeat)
        if "load" in suites:
            load_suite(app, scratch_root)


if __name__ == "__main__":
    main()
