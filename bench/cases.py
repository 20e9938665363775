"""One measurement per process: `python -m bench.cases CASE PLAN_JSON SCRATCH_DIR`.

run_all starts each case in a fresh interpreter so that the peak resident set size the case
reports belongs to that case alone. The case prints one JSON object on its last stdout line:
seconds, peaks, bytes written.

Peaks are the kernel's high-water mark of this process's memory (VmHWM in /proc/self/status).
getrusage's ru_maxrss is not used: Linux carries it across fork and exec, so a child started
by run_all (which holds the app, about 100 MB) would report at least the parent's peak
whatever it did itself. Two peaks are reported: the process's (start-up included, what a
worker needs) and the measured work's alone, taken by resetting the high-water mark
(`/proc/self/clear_refs`) as the clock starts.

A PDF report's memory is judged over all the processes it runs. The renderer starts none, and
a sampler thread checks that: it reads every descendant's VmHWM and VmRSS from /proc while the
work runs (a process's mark is gone once it has exited), so the case also reports the
children's peaks, how many there were, and the highest sum of resident sets seen at one
moment, this process included.

The export cases go through the real job path: the file is admitted with
`request_query_file` (or `request_report_file`) for the workspace's administrator, then
`run_export_file` (the body the RQ job runs) produces it into a filesystem storage folder, in
the app a worker gives its jobs (`jobs.app_context.worker_app`: no pages). The
query-file anchors run the select the export builds (handed over as SQL text in the plan, so
an anchor's process imports nothing of the app) straight on psycopg and write the rows with
the fastest plain tool. The PDF anchor draws the same rows with the same fonts on a bare
reportlab canvas.

What the clock covers: for an anchor, connecting, reading every row and writing the file; for
an export, the job body from its first query to the settled file. Set-up (interpreter,
imports, the app, admission) is outside the time and the work's peak, but inside the
process's peak, as it is inside a worker's.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg

if TYPE_CHECKING:
    from flask import Flask
    from sqlalchemy import Select

    from app.domain.people.access import RequesterContext
    from bench.dataset import BenchWorkspace

# How often the children's memory is read while a case that starts processes runs.
CHILD_SAMPLE_SECONDS = 0.02


def _status_kib(pid: int, field: str) -> int | None:
    """One memory field (e.g. "VmHWM:") of /proc/PID/status in KiB; None once the process is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    # A zombie's status has no memory lines.
    return None


def _high_water_kib() -> int:
    peak = _status_kib(os.getpid(), "VmHWM:")
    if peak is None:
        raise RuntimeError("/proc/self/status has no VmHWM line; the benchmark needs Linux")
    return peak


def _reset_high_water() -> bool:
    """Start the high-water mark again from the current RSS; False where the kernel refuses."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return True


def _descendants(pid: int) -> list[int]:
    """Every live process below `pid`, started by any of its threads."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="ascii") as children:
                    kids = [int(kid) for kid in children.read().split()]
            except OSError:
                continue
            found += kids
            pending += kids
    return found


def _command_line(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as command_line:
            return command_line.read()
    except OSError:
        return None


class ChildSampler:
    """The memory of the processes this one starts while it works, read from /proc as they run.

    Each child's VmHWM only ever rises, so the last reading before it exits is its peak but for
    whatever it gained in the final interval; a rendering process renders chunk after chunk,
    so that is one chunk's growth at most, which earlier chunks' peaks already show.

    A child caught between fork and exec still runs this process's command in a copy of this
    process's pages, and would be counted at this process's size (seen: multiprocessing's
    12 MB resource tracker read as 117 MB); such a reading is skipped, since exec starts a new high-water mark.
    """

    def __init__(self) -> None:
        self._own_command = _command_line(os.getpid())
        self.peaks_kib: dict[int, int] = {}
        self.concurrent_peak_kib = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-child-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stopped.wait(CHILD_SAMPLE_SECONDS):
            self._sample()

    def _sample(self) -> None:
        me = os.getpid()
        together = _status_kib(me, "VmRSS:") or 0
        for pid in _descendants(me):
            if _command_line(pid) in (None, self._own_command):
                continue
            peak, resident = _status_kib(pid, "VmHWM:"), _status_kib(pid, "VmRSS:")
            if peak is None or resident is None:
                continue
            self.peaks_kib[pid] = max(self.peaks_kib.get(pid, 0), peak)
            together += resident
        self.concurrent_peak_kib = max(self.concurrent_peak_kib, together)


class Meter:
    """The clock and the memory high-water marks around the measured work of one case."""

    def __init__(self, sample_children: bool = False) -> None:
        self.seconds = 0.0
        self.process_peak_kib = 0
        self.work_peak_kib: int | None = None
        self.children: ChildSampler | None = ChildSampler() if sample_children else None
        self._setup_peak_kib = 0
        self._reset = False
        self._started = 0.0

    def start(self) -> None:
        self._setup_peak_kib = _high_water_kib()
        self._reset = _reset_high_water()
        if self.children is not None:
            self.children.start()
        self._started = time.perf_counter()

    def stop(self) -> None:
        self.seconds = time.perf_counter() - self._started
        if self.children is not None:
            self.children.stop()
        peak = _high_water_kib()
        self.work_peak_kib = peak if self._reset else None
        self.process_peak_kib = max(self._setup_peak_kib, peak)


@dataclass(frozen=True)
class Plan:
    """What a query-file case needs: the benchmark workspace, where its rows are, how to select them."""

    workspace_id: int
    admin_id: int
    query_id: int
    rows: int
    dsn: str
    # The export's select with plain columns, and the same select as the CSV export runs it
    # (every column formatted and neutralised in SQL).
    select: str
    formatted_select: str
    column_names: list[str]
    column_types: list[str]
    sheet_name: str

    def to_json(self) -> str:
        return json.dumps(asdict(self))


@dataclass(frozen=True)
class ReportPlan:
    """What a report case needs: the report, and for the anchor the rows and page a file of it prints."""

    workspace_id: int
    admin_id: int
    report_id: int
    rows: int
    dsn: str
    select: str
    # What `request_report_file` stores on the file: the substituted request and the print parameters.
    request: dict
    print_params: dict
    date_format: str

    def to_json(self) -> str:
        return json.dumps(asdict(self))


@dataclass(frozen=True)
class PackagePlan:
    """What a package case needs: the workspace, and for the anchor each dataset's select as SQL text."""

    workspace_id: int
    admin_id: int
    rows: int
    dsn: str
    datasets: list[str]
    selects: dict[str, str]
    # The package writer's deflate level, so copy_zip compresses as hard as the package does.
    compression_level: int
    # psql_copy_gzip: each dataset's COPY statement as the package runs it (its values bound), and
    # the settings the package's snapshot makes first.
    copies: dict[str, str]
    session_settings: list[str]

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def _admin_context(bench: BenchWorkspace) -> RequesterContext:
    from app.domain.people.access import RequesterContext

    return RequesterContext(
        workspace_id=bench.workspace_id,
        person_id=bench.admin_id,
        role="admin",
        dataset_grants=frozenset(),
        team_scope=None,
        grants=frozenset(),
    )


def _sql_text(statement: Select) -> str:
    """A statement as PostgreSQL text with its values written in, for psycopg and COPY."""
    from sqlalchemy.dialects import postgresql

    return str(statement.compile(dialect=postgresql.psycopg.dialect(), compile_kwargs={"literal_binds": True}))


def plan_for(bench: BenchWorkspace) -> Plan:
    """The plan for a benchmark workspace: the export's own selects, as SQL text.

    Both come from the export's code for the administrator's all-columns request: `build_select`
    scopes, orders and limits exactly as the export does, and app/data/csv_copy's `copy_statement`
    wraps each column in the formatting and neutralising the CSV export runs in SQL.
    """
    from app.data.csv_copy import copy_statement
    from app.data.query_runner import build_select, request_columns
    from app.domain.sources.catalog import get_dataset
    from app.domain.sources.stored_request import FileRequest
    from bench.dataset import DATASET, database_url, libpq_url

    dataset = get_dataset(DATASET)
    assert dataset is not None
    request = FileRequest(DATASET, tuple(dataset.column_names))
    select = build_select(request, _admin_context(bench))
    return Plan(
        workspace_id=bench.workspace_id,
        admin_id=bench.admin_id,
        query_id=bench.query_id,
        rows=bench.rows,
        dsn=libpq_url(database_url()),
        select=_sql_text(select),
        formatted_select=_sql_text(copy_statement(select, request_columns(request), exact_values=False)),
        column_names=dataset.column_names,
        column_types=[column.type for column in dataset.columns],
        sheet_name=dataset.label,
    )


def report_plan_for(bench: BenchWorkspace, report_id: int, rows: int) -> ReportPlan:
    """The plan for one benchmark report: the request and print parameters its file would keep."""
    from sqlalchemy import select

    from app.data.query_runner import build_select
    from app.extensions import db
    from app.models import Report, SavedQuery, Workspace
    from app.models.types import utcnow
    from app.services.files.report_files import file_request
    from bench.dataset import database_url, libpq_url

    report = db.session.get(Report, report_id)
    assert report is not None
    query = db.session.get(SavedQuery, report.source_query_id)
    assert query is not None
    request, print_params = file_request(report, query, utcnow().date())
    date_format = db.session.execute(
        select(Workspace.date_format).where(Workspace.id == bench.workspace_id)
    ).scalar_one()
    return ReportPlan(
        workspace_id=bench.workspace_id,
        admin_id=bench.admin_id,
        report_id=report_id,
        rows=rows,
        dsn=libpq_url(database_url()),
        select=_sql_text(build_select(request, _admin_context(bench))),
        request=request.to_json(),
        print_params=print_params.to_json(),
        date_format=date_format,
    )


# --------------------------------------------------------------------------- query-file anchors


def _copy_to_file(
    dsn: str, select: str, target: Path, meter: Meter, session_settings: tuple[str, ...] = (), options: str = ""
) -> int:
    statement = f"COPY ({select}) TO STDOUT WITH (FORMAT csv, HEADER true{options})"
    meter.start()
    with psycopg.connect(dsn) as conn, target.open("wb") as out:
        for setting in session_settings:
            conn.execute(setting)
        with conn.cursor().copy(statement) as copy:
            for chunk in copy:
                out.write(chunk)
    meter.stop()
    return target.stat().st_size


def copy_csv_anchor(plan: Plan, scratch: Path, meter: Meter) -> int:
    """`COPY (select) TO STDOUT WITH CSV HEADER` of the plain columns, every chunk written to a file."""
    return _copy_to_file(plan.dsn, plan.select, scratch / "anchor.csv", meter)


def copy_csv_same_select_anchor(plan: Plan, scratch: Path, meter: Meter) -> int:
    """The same COPY of exactly the select the CSV export runs, in the session settings it sets."""
    # The settings app/data/csv_copy makes before its COPY: the dates' and times' shape, and no
    # parallel workers.
    settings = (
        "SET LOCAL datestyle = 'ISO, YMD'",
        "SET LOCAL timezone = 'UTC'",
        "SET LOCAL max_parallel_workers_per_gather = 0",
    )
    columns = zip(plan.column_names, plan.column_types, strict=True)
    text_columns = [f'"{name}"' for name, kind in columns if kind == "text"]
    options = f", FORCE_QUOTE ({', '.join(text_columns)})" if text_columns else ""
    return _copy_to_file(plan.dsn, plan.formatted_select, scratch / "anchor.csv", meter, settings, options)


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


# --------------------------------------------------------------------------- PDF anchor


def reportlab_canvas(plan: ReportPlan, scratch: Path, meter: Meter) -> int:
    """The report's rows drawn on a bare reportlab canvas: the least a PDF of them costs.

    The rows are read with psycopg (the export's own select) and each cell's text is the
    renderer's (`format_value`), drawn with `drawString` in the renderer's primary font and
    size, one line per row, the header row at the top of every page and "Page N" at the foot.
    What it leaves out is what the renderer adds: wrapping, fallback fonts and shaping, totals,
    the title block, "of M", and platypus's page flow.
    """
    from reportlab.pdfgen.canvas import Canvas

    from app.data.query_runner import request_dataset
    from app.domain.sources.print_params import PrintParams
    from app.domain.sources.stored_request import FileRequest
    from app.models.types import utcnow
    from app.rendering.pdf import format_value
    from app.rendering.pdf.fonts import font_set
    from app.rendering.pdf.model import MARGIN_BOTTOM, MARGIN_SIDE, MARGIN_TOP
    from app.rendering.pdf.styles import CELL_LEADING, CELL_SIZE, PAD_X
    from app.services.files.report_file_production import pdf_layout, printed_columns

    request, print_params = FileRequest.from_json(plan.request), PrintParams.from_json(plan.print_params)
    dataset = request_dataset(request)
    columns = printed_columns(dataset, print_params.layout)
    positions = {name: index for index, name in enumerate(request.columns)}
    indexes = [positions[column.name] for column in columns]
    target = scratch / "anchor.pdf"
    meter.start()
    regular, bold = font_set().primary.name, font_set(bold=True).primary.name
    page = pdf_layout(print_params, request, dataset, plan.date_format, utcnow())
    width, height = page.page_size_points
    content = width - 2 * MARGIN_SIDE
    weights = [column.width or 1.0 for column in columns]
    xs = [MARGIN_SIDE + PAD_X + content * sum(weights[:i]) / sum(weights) for i in range(len(columns))]
    canvas = Canvas(str(target), pagesize=(width, height))
    top, bottom = height - MARGIN_TOP - CELL_SIZE, MARGIN_BOTTOM
    y = bottom
    drawn = 0

    def new_page() -> float:
        if canvas.getPageNumber() > 1 or drawn:
            canvas.drawRightString(width - MARGIN_SIDE, MARGIN_BOTTOM / 2, f"Page {canvas.getPageNumber()}")
            canvas.showPage()
        canvas.setFont(bold, CELL_SIZE)
        for x, column in zip(xs, columns, strict=True):
            canvas.drawString(x, top, column.label)
        canvas.setFont(regular, CELL_SIZE)
        return top - CELL_LEADING

    with psycopg.connect(plan.dsn) as conn, conn.cursor(name="bench_anchor_rows") as cursor:
        cursor.itersize = 2000
        cursor.execute(plan.select)
        for row in cursor:
            if y < bottom + CELL_LEADING:
                y = new_page()
            for x, column, index in zip(xs, columns, indexes, strict=True):
                canvas.drawString(x, y, format_value(column, row[index], page))
            y -= CELL_LEADING
            drawn += 1
    canvas.drawRightString(width - MARGIN_SIDE, MARGIN_BOTTOM / 2, f"Page {canvas.getPageNumber()}")
    canvas.save()
    meter.stop()
    if drawn != plan.rows:
        raise SystemExit(f"the canvas anchor drew {drawn} rows, expected {plan.rows}")
    return target.stat().st_size


# --------------------------------------------------------------------------- package anchor and job


def copy_zip_anchor(plan: PackagePlan, scratch: Path, meter: Meter) -> int:
    """Each dataset's `COPY … TO STDOUT WITH CSV HEADER` streamed into a zip entry, one snapshot for all."""
    import zipfile

    target = scratch / "anchor.zip"
    meter.start()
    with (
        psycopg.connect(plan.dsn) as conn,
        zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=plan.compression_level) as archive,
    ):
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        conn.execute("SET LOCAL timezone = 'UTC'")
        for dataset in plan.datasets:
            statement = f"COPY ({plan.selects[dataset]}) TO STDOUT WITH (FORMAT csv, HEADER true)"
            with archive.open(f"{dataset}.csv", "w", force_zip64=True) as entry, conn.cursor().copy(statement) as copy:
                for chunk in copy:
                    entry.write(chunk)
        conn.rollback()
    meter.stop()
    return target.stat().st_size


# The native anchor's deflate, fixed whatever the package's own level (issue 31 measures the package
# against `gzip -6`; its bytes may reach 1.1 times the pipe's).
NATIVE_ANCHOR_GZIP_LEVEL = 6


def psql_copy_gzip_anchor(plan: PackagePlan, scratch: Path, meter: Meter) -> int:
    """The package's own COPY statements run by psql in one snapshot, its output piped through
    `gzip -6` into one file: native code end to end."""
    import shutil
    import subprocess

    missing = [tool for tool in ("psql", "gzip") if shutil.which(tool) is None]
    if missing:
        raise SystemExit(f"psql_copy_gzip needs {' and '.join(missing)} on PATH (psql: the postgresql-client package)")
    script = scratch / "copies.sql"
    statements = [
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        *plan.session_settings,
        *(plan.copies[dataset] for dataset in plan.datasets),
        "ROLLBACK",
    ]
    script.write_text("".join(f"{statement};\n" for statement in statements), encoding="utf-8")
    target = scratch / "anchor.csv.gz"
    # -q leaves out the command tags ("COPY 5000"), so stdout carries the records alone.
    psql_command = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", plan.dsn, "-f", str(script)]
    meter.start()
    with target.open("wb") as out:
        psql = subprocess.Popen(psql_command, stdout=subprocess.PIPE)
        gzip = subprocess.Popen(["gzip", f"-{NATIVE_ANCHOR_GZIP_LEVEL}"], stdin=psql.stdout, stdout=out)
        assert psql.stdout is not None
        psql.stdout.close()  # gzip holds the pipe now: psql sees it close if gzip dies
        statuses = gzip.wait(), psql.wait()
    meter.stop()
    if statuses != (0, 0):
        raise SystemExit(f"psql | gzip ended with {statuses}")
    return target.stat().st_size


def package_csv(plan: PackagePlan, scratch: Path, meter: Meter) -> int:
    """Admit an execution of every dataset as CSV and produce its package through the job body."""
    return _package(plan, scratch, meter, "csv")


def package_parquet(plan: PackagePlan, scratch: Path, meter: Meter) -> int:
    """The same package as Parquet."""
    return _package(plan, scratch, meter, "parquet")


def _package(plan: PackagePlan, scratch: Path, meter: Meter, format: str) -> int:
    from sqlalchemy import delete

    from app.domain.workspace_export import export_execution
    from app.extensions import db
    from app.models import ExportExecution, ExportPackage
    from app.models.export_execution import ExecutionTrigger
    from app.services.workspace_export.package_production import run_execution
    from bench.dataset import create_job_app

    app = create_job_app((scratch / "storage").as_uri())
    with app.app_context():
        snapshot = {
            "datasets": plan.datasets,
            "format": format,
            "volume_size_bytes": 256 * 1024 * 1024,
            "retention_days": 1,
            "notify_person_ids": [],
            "settings_version": 1,
        }
        execution_id = export_execution.admit(
            workspace_id=plan.workspace_id,
            trigger=ExecutionTrigger.MANUAL,
            requested_by_id=plan.admin_id,
            settings_snapshot=snapshot,
            allowance_used=1,
            allowance_limit=1,
        ).id
        db.session.commit()
    with app.app_context():
        meter.start()
        outcome = run_execution(execution_id)
        meter.stop()
    with app.app_context():
        execution = db.session.get(ExportExecution, execution_id)
        package = db.session.query(ExportPackage).filter_by(execution_id=execution_id).one_or_none()
        status, detail = execution.status, execution.failure_detail
        written, size = execution.rows_written, (package.size_bytes if package else 0)
        db.session.execute(delete(ExportExecution).where(ExportExecution.id == execution_id))
        db.session.commit()
    if outcome != "succeeded" or status != "succeeded":
        raise SystemExit(f"package ended {outcome!r} ({status}): {detail}")
    if written != plan.rows:
        raise SystemExit(f"package wrote {written} rows, expected {plan.rows}")
    return int(size)


# --------------------------------------------------------------------------- the real job path


def run_job(app: Flask, export_id: int, meter: Meter, rows: int, label: str) -> int:
    """Run the job body on an admitted file, check the outcome, then remove the file's row again."""
    from app.extensions import db
    from app.models import ExportFile
    from app.services.files.export_runner import run_export_file

    # A job gets an app context of its own, as the worker gives it one.
    with app.app_context():
        meter.start()
        outcome = run_export_file(export_id)
        meter.stop()

    with app.app_context():
        export = db.session.get(ExportFile, export_id)
        assert export is not None
        status, row_count, size, detail = export.status, export.row_count, export.size_bytes, export.failure_detail
        db.session.delete(export)
        db.session.commit()
    if outcome != "succeeded" or status != "succeeded":
        raise SystemExit(f"{label} ended {outcome!r} ({status}): {detail}")
    if row_count != rows:
        raise SystemExit(f"{label} wrote {row_count} rows, expected {rows}")
    return int(size or 0)


def export_through_job(plan: Plan, scratch: Path, meter: Meter, file_format: str) -> int:
    """Admit a query file for the workspace's administrator and produce it through the job body."""
    from app.domain.people.access import current_context
    from app.extensions import db
    from app.models import SavedQuery
    from app.services.files.file_requests import QueryFileOptions, request_query_file
    from bench.dataset import create_job_app

    app = create_job_app((scratch / "storage").as_uri())
    with app.app_context():
        access = current_context(plan.workspace_id, plan.admin_id)
        query = db.session.get(SavedQuery, plan.query_id)
        assert access is not None and query is not None, "benchmark workspace is incomplete"
        # The job body below produces the file; nothing is put on RQ.
        export_id = request_query_file(access, query, QueryFileOptions(format=file_format), dispatch_now=False).id
    return run_job(app, export_id, meter, plan.rows, f"{file_format} export")


def csv_export(plan: Plan, scratch: Path, meter: Meter) -> int:
    return export_through_job(plan, scratch, meter, "csv")


def xlsx_export(plan: Plan, scratch: Path, meter: Meter) -> int:
    return export_through_job(plan, scratch, meter, "xlsx")


def report_pdf(plan: ReportPlan, scratch: Path, meter: Meter) -> int:
    """Admit a PDF file of the report for the workspace's administrator and produce it through the job body."""
    from app.domain.people.access import current_context
    from app.extensions import db
    from app.models import Report
    from app.services.files.report_files import request_report_file
    from bench.dataset import create_job_app

    app = create_job_app((scratch / "storage").as_uri())
    with app.app_context():
        access = current_context(plan.workspace_id, plan.admin_id)
        report = db.session.get(Report, plan.report_id)
        assert access is not None and report is not None, "benchmark report is missing"
        export_id = request_report_file(access, report, "pdf", dispatch_now=False).id
    return run_job(app, export_id, meter, plan.rows, "report PDF")


# --------------------------------------------------------------------------- schedule runs

# The per-recipient run: fifty ward managers over ten distinct accesses.
PER_RECIPIENT_RECIPIENTS = 50
PER_RECIPIENT_DISTINCT_ACCESS = 10


def _schedule_run(plan: Plan, scratch: Path, meter: Meter, recipients: int, distinct_access: int) -> int:
    """One run of a query schedule (CSV) of the workspace's query as each of `recipients` members,
    whose row scopes are `distinct_access` different sets of eleven of the twelve teams (one access,
    every team, for a single recipient), mailed to a scratch outbox. The people, the schedule, its
    run and its files are removed afterwards. Returns the bytes of the files made."""
    from sqlalchemy import delete, select

    from app.extensions import db
    from app.models import ExportFile, Membership, Person, SavedQuery, Team
    from app.models.schedule import RunTrigger, Schedule, ScheduleRecipient, ScheduleRunFile
    from app.models.types import utcnow
    from app.services.schedules.schedule_admission import admit_run
    from app.services.schedules.schedule_runs import process_run
    from bench.dataset import create_bench_app

    os.environ["MAIL_URL"] = (scratch / "outbox").as_uri()
    app = create_bench_app((scratch / "storage").as_uri())
    with app.app_context():
        query = db.session.get_one(SavedQuery, plan.query_id)
        teams = list(
            db.session.scalars(select(Team.id).where(Team.workspace_id == plan.workspace_id).order_by(Team.id))
        )
        people = [
            Person(email=f"bench-recipient-{n}@example.test", name=f"Ward manager {n}", password_hash="!")
            for n in range(recipients)
        ]
        db.session.add_all(people)
        db.session.flush()
        for n, person in enumerate(people):
            scope = None if distinct_access == 1 else [t for t in teams if t != teams[n % distinct_access]]
            db.session.add(
                Membership(
                    workspace_id=plan.workspace_id,
                    person_id=person.id,
                    role="member",
                    grants=[],
                    dataset_grants=[query.dataset],
                    team_scope=scope,
                )
            )
        schedule = Schedule(
            workspace_id=plan.workspace_id,
            name=f"Bench per recipient {recipients}",
            kind="query",
            owner_id=plan.admin_id,
            format="csv",
            source_query_id=query.id,
            query_definition=query.definition(),
            query_version=query.version,
            timetable={"kind": "daily", "time": "07:00", "zone": "UTC"},
            run_as_recipients=True,
            recipients=[
                ScheduleRecipient(person_id=person.id, address_key=f"person:{person.id}", position=n)
                for n, person in enumerate(people)
            ],
        )
        db.session.add(schedule)
        db.session.commit()
        run = admit_run(
            schedule_id=schedule.id,
            workspace_id=plan.workspace_id,
            occurrence_at=utcnow().replace(microsecond=0),
            trigger=RunTrigger.MANUAL,
        )
        assert run is not None
        run_id, schedule_id, person_ids = run.id, schedule.id, [p.id for p in people]

    with app.app_context():
        meter.start()
        outcome = process_run(run_id)
        meter.stop()

    with app.app_context():
        export_ids = list(db.session.scalars(select(ScheduleRunFile.export_id).where(ScheduleRunFile.run_id == run_id)))
        size = sum(db.session.scalars(select(ExportFile.size_bytes).where(ExportFile.id.in_(export_ids))))
        db.session.execute(delete(Schedule).where(Schedule.id == schedule_id))
        db.session.execute(delete(ExportFile).where(ExportFile.id.in_(export_ids)))
        db.session.execute(delete(Membership).where(Membership.person_id.in_(person_ids)))
        db.session.execute(delete(Person).where(Person.id.in_(person_ids)))
        db.session.commit()
    if outcome != "succeeded" or len(export_ids) != distinct_access:
        raise SystemExit(f"the schedule run ended {outcome!r} with {len(export_ids)} files, not {distinct_access}")
    return int(size)


def schedule_run_one_recipient(plan: Plan, scratch: Path, meter: Meter) -> int:
    return _schedule_run(plan, scratch, meter, recipients=1, distinct_access=1)


def schedule_run_per_recipient(plan: Plan, scratch: Path, meter: Meter) -> int:
    return _schedule_run(
        plan, scratch, meter, recipients=PER_RECIPIENT_RECIPIENTS, distinct_access=PER_RECIPIENT_DISTINCT_ACCESS
    )


@dataclass(frozen=True)
class Case:
    plan_type: type
    run: Callable[[Any, Path, Meter], int]
    # Whether the memory of any process the work starts is measured too (a report's peak is
    # judged over all its processes, so a renderer that started one could not hide it).
    sample_children: bool = False


CASES: dict[str, Case] = {
    "copy_csv": Case(Plan, copy_csv_anchor),
    "copy_csv_same_select": Case(Plan, copy_csv_same_select_anchor),
    "xlsxwriter_constant_memory": Case(Plan, xlsxwriter_anchor),
    "csv_export": Case(Plan, csv_export),
    "xlsx_export": Case(Plan, xlsx_export),
    "reportlab_canvas": Case(ReportPlan, reportlab_canvas),
    "report_pdf": Case(ReportPlan, report_pdf, sample_children=True),
    "copy_zip": Case(PackagePlan, copy_zip_anchor),
    "psql_copy_gzip": Case(PackagePlan, psql_copy_gzip_anchor, sample_children=True),
    "package_csv": Case(PackagePlan, package_csv),
    "package_parquet": Case(PackagePlan, package_parquet),
    "schedule_run_one_recipient": Case(Plan, schedule_run_one_recipient),
    "schedule_run_per_recipient": Case(Plan, schedule_run_per_recipient),
}


def _mib(kib: int | None) -> float | None:
    return None if kib is None else kib / 1024


def measure(case: str, plan_json: str, scratch: Path) -> dict:
    """Run one case and report its time, its peaks (MiB) and the bytes it wrote."""
    spec = CASES[case]
    meter = Meter(sample_children=spec.sample_children)
    size = spec.run(spec.plan_type(**json.loads(plan_json)), scratch, meter)
    children = meter.children
    return {
        "case": case,
        "seconds": meter.seconds,
        "peak_rss_mb": meter.process_peak_kib / 1024,
        "work_peak_rss_mb": _mib(meter.work_peak_kib),
        "children": 0 if children is None else len(children.peaks_kib),
        "children_peak_rss_mb": 0.0 if children is None else sum(children.peaks_kib.values()) / 1024,
        "children_peaks_rss_mb": []
        if children is None
        else sorted((kib / 1024 for kib in children.peaks_kib.values()), reverse=True),
        "concurrent_peak_rss_mb": None if children is None else _mib(children.concurrent_peak_kib),
        "bytes": size,
    }


def main(argv: list[str]) -> None:
    case, plan_json, scratch = argv
    print(json.dumps(measure(case, plan_json, Path(scratch))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
