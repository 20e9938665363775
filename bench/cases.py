"""One measurement per process: `python -m bench.cases CASE PLAN_JSON SCRATCH_DIR`.

run_all starts each case in a fresh interpreter so that the peak resident set size the case
reports belongs to that case alone. The case prints one JSON object on its last stdout line:
seconds, peak_rss_mb, bytes written.

Peaks are the kernel's high-water mark of this process's memory (VmHWM in /proc/self/status).
getrusage's ru_maxrss is not used: Linux carries it across fork and exec, so a child started
by run_all (which holds the app, about 100 MB) would report at least the parent's peak
whatever it did itself. Two peaks are reported: the process's (start-up included, what a
worker needs) and the measured work's alone, taken by resetting the high-water mark
(`/proc/self/clear_refs`) as the clock starts.

The export cases go through the real job path: the file is admitted with
`request_query_file` for the workspace's administrator, then `run_export_file` (the body the
RQ job runs) produces it into a filesystem storage folder. The anchors run the select the
export builds (handed over as SQL text in the plan, so an anchor's process imports nothing of
the app) straight on psycopg and write the rows with the fastest plain tool.

What the clock covers: for an anchor, connecting, reading every row and writing the file; for
an export, the job body from its first query to the settled file. Set-up (interpreter,
imports, the app, admission) is outside the time and the work's peak, but inside the
process's peak, as it is inside a worker's.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg

if TYPE_CHECKING:
    from bench.dataset import BenchWorkspace


def _high_water_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("/proc/self/status has no VmHWM line; the benchmark needs Linux")


def _reset_high_water() -> bool:
    """Start the high-water mark again from the current RSS; False where the kernel refuses."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return True


class Meter:
    """The clock and the memory high-water marks around the measured work of one case."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.process_peak_kib = 0
        self.work_peak_kib: int | None = None
        self._setup_peak_kib = 0
        self._reset = False
        self._started = 0.0

    def start(self) -> None:
        self._setup_peak_kib = _high_water_kib()
        self._reset = _reset_high_water()
        self._started = time.perf_counter()

    def stop(self) -> None:
        self.seconds = time.perf_counter() - self._started
        peak = _high_water_kib()
        self.work_peak_kib = peak if self._reset else None
        self.process_peak_kib = max(self._setup_peak_kib, peak)


@dataclass(frozen=True)
class Plan:
    """What a case needs: the benchmark workspace, where its rows are and how to select them."""

    workspace_id: int
    admin_id: int
    query_id: int
    rows: int
    dsn: str
    select: str
    column_names: list[str]
    column_types: list[str]
    sheet_name: str

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def plan_for(bench: BenchWorkspace) -> Plan:
    """The plan for a benchmark workspace: the export's own select, as SQL text.

    It comes from the export's `build_select` for the administrator's all-columns request, so
    it scopes, orders and limits exactly as the export does; what the anchors leave out is only
    the per-column formatting and neutralising the export adds on top.
    """
    from sqlalchemy.dialects import postgresql

    from app.domain.access import RequesterContext
    from app.domain.catalog import get_dataset
    from app.services.query_runner import build_select
    from bench.dataset import DATASET, database_url, libpq_url

    dataset = get_dataset(DATASET)
    assert dataset is not None
    access = RequesterContext(
        workspace_id=bench.workspace_id,
        person_id=bench.admin_id,
        role="admin",
        dataset_grants=frozenset(),
        team_scope=None,
        grants=frozenset(),
    )
    request = {"dataset": DATASET, "columns": dataset.column_names, "filters": [], "sort": [], "row_limit": None}
    select = build_select(request, access).compile(
        dialect=postgresql.psycopg.dialect(), compile_kwargs={"literal_binds": True}
    )
    return Plan(
        workspace_id=bench.workspace_id,
        admin_id=bench.admin_id,
        query_id=bench.query_id,
        rows=bench.rows,
        dsn=libpq_url(database_url()),
        select=str(select),
        column_names=dataset.column_names,
        column_types=[column.type for column in dataset.columns],
        sheet_name=dataset.label,
    )


def copy_csv_anchor(plan: Plan, scratch: Path, meter: Meter) -> int:
    """`COPY (select) TO STDOUT WITH CSV HEADER`, every chunk written to a file."""
    statement = f"COPY ({plan.select}) TO STDOUT WITH (FORMAT csv, HEADER true)"
    target = scratch / "anchor.csv"
    meter.start()
    with psycopg.connect(plan.dsn) as conn, target.open("wb") as out, conn.cursor().copy(statement) as copy:
        for chunk in copy:
            out.write(chunk)
    meter.stop()
    return target.stat().st_size


def xlsxwriter_anchor(plan: Plan, scratch: Path, meter: Meter) -> int:
    """XlsxWriter in constant_memory mode, one typed write per cell, rows from a server-side cursor."""
    import xlsxwriter

    target = scratch / "anchor.xlsx"
    meter.start()
    workbook = xlsxwriter.Workbook(
        str(target), {"constant_memory": True, "strings_to_formulas": False, "remove_timezone": True}
    )
    sheet = workbook.add_worksheet(plan.sheet_name[:31])
    date_format = workbook.add_format({"num_format": "yyyy-mm-dd"})
    datetime_format = workbook.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
    writers: dict[str, tuple[Callable, object]] = {
        "text": (sheet.write_string, None),
        "integer": (sheet.write_number, None),
        "decimal": (sheet.write_number, None),
        "date": (sheet.write_datetime, date_format),
        "datetime": (sheet.write_datetime, datetime_format),
        "boolean": (sheet.write_boolean, None),
    }
    cells = [writers[column_type] for column_type in plan.column_types]
    sheet.write_row(0, 0, plan.column_names)
    with psycopg.connect(plan.dsn) as conn, conn.cursor(name="bench_anchor_rows") as cursor:
        cursor.itersize = 2000
        cursor.execute(plan.select)
        for row_number, row in enumerate(cursor, start=1):
            for column_number, value in enumerate(row):
                if value is not None:
                    write, cell_format = cells[column_number]
                    write(row_number, column_number, value, cell_format)
    workbook.close()
    meter.stop()
    return target.stat().st_size


def export_through_job(plan: Plan, scratch: Path, meter: Meter, file_format: str) -> int:
    """Admit the file, run the job body, check the outcome, then remove the file's row again."""
    from app.domain.access import current_context
    from app.extensions import db
    from app.models import QueryExport, SavedQuery
    from app.services.export_runner import run_export_file
    from app.services.file_requests import QueryFileOptions, request_query_file
    from bench.dataset import create_bench_app

    app = create_bench_app((scratch / "storage").as_uri())
    with app.app_context():
        access = current_context(plan.workspace_id, plan.admin_id)
        query = db.session.get(SavedQuery, plan.query_id)
        assert access is not None and query is not None, "benchmark workspace is incomplete"
        export_id = request_query_file(access, query, QueryFileOptions(format=file_format)).id

    # A job gets an app context of its own, as the worker gives it one.
    with app.app_context():
        meter.start()
        outcome = run_export_file(export_id)
        meter.stop()

    with app.app_context():
        export = db.session.get(QueryExport, export_id)
        assert export is not None
        status, row_count, size, detail = export.status, export.row_count, export.size_bytes, export.failure_detail
        db.session.delete(export)
        db.session.commit()
    if outcome != "succeeded" or status != "succeeded":
        raise SystemExit(f"{file_format} export ended {outcome!r} ({status}): {detail}")
    if row_count != plan.rows:
        raise SystemExit(f"{file_format} export wrote {row_count} rows, expected {plan.rows}")
    return int(size or 0)


def csv_export(plan: Plan, scratch: Path, meter: Meter) -> int:
    return export_through_job(plan, scratch, meter, "csv")


def xlsx_export(plan: Plan, scratch: Path, meter: Meter) -> int:
    return export_through_job(plan, scratch, meter, "xlsx")


CASES: dict[str, Callable[[Plan, Path, Meter], int]] = {
    "copy_csv": copy_csv_anchor,
    "xlsxwriter_constant_memory": xlsxwriter_anchor,
    "csv_export": csv_export,
    "xlsx_export": xlsx_export,
}


def measure(case: str, plan: Plan, scratch: Path) -> dict:
    """Run one case and report its time, its peaks (MiB) and the bytes it wrote."""
    meter = Meter()
    size = CASES[case](plan, scratch, meter)
    work_peak = None if meter.work_peak_kib is None else meter.work_peak_kib / 1024
    return {
        "case": case,
        "seconds": meter.seconds,
        "peak_rss_mb": meter.process_peak_kib / 1024,
        "work_peak_rss_mb": work_peak,
        "bytes": size,
    }


def main(argv: list[str]) -> None:
    case, plan_json, scratch = argv
    plan = Plan(**json.loads(plan_json))
    print(json.dumps(measure(case, plan, Path(scratch))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
