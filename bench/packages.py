"""The packages suite (issues 10 and 20): a workspace-export package of BENCH_PACKAGE_ROWS rows over
five datasets, against COPY of the same tables piped through zip and against the package's own COPY
statements through psql and gzip, in the same run.

The data: one workspace ("Benchmark package: N rows") with the query suite's 12 teams and 2,000
people (bench/dataset.py), shifts (a fifth of the rows), time-off requests (a twentieth) and
timesheet entries (the rest), built by `INSERT … SELECT … FROM generate_series` and frozen.

The cases, each in its own process (bench/cases.py):

    copy_zip      the anchor: for each dataset, `COPY (SELECT <every catalog column> FROM <table>
                  WHERE workspace_id = … ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER true)` on
                  psycopg, every chunk written into one zip entry (zipfile, deflate at the
                  package writer's level), all inside one REPEATABLE READ transaction
    package_csv   the real job body: an execution admitted with the settings snapshot (every
                  dataset, CSV, 256 MiB volumes), then `run_execution` (what the RQ job runs)
                  with a filesystem storage folder; checked `succeeded` with every row written

    psql_copy_gzip  the stronger anchor (issue 20): the package's own COPY statements (built by
                  app/data/package_snapshot.py, values bound as psycopg binds them) run by `psql`
                  in one REPEATABLE READ snapshot, its output piped through `gzip -6`
    package_parquet  the same job body with the format Parquet (issue 20), its anchor the CSV
                  package of the same run

Lines: {"name": "package_csv", "rows", "seconds", "peak_rss_mb", "anchor": "copy_zip",
"anchor_seconds", "ratio", …}, then its targets: ratio ≤ 2.0 (issue 10) and peak RSS under 125 MB
(issue 31); the same package against "psql_copy_gzip", then its targets (issue 31): time ≤ 1.0 ×
and bytes ≤ 1.1 × the pipe's;
{"name": "package_parquet", "rows", "seconds", "peak_rss_mb", "bytes", "anchor": "package_csv",
"anchor_seconds", "ratio", "anchor_bytes"}, then its targets (issue 31): ratio ≤ 0.75, peak RSS
under 215 MB, bytes at most 0.55 times the CSV package's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from flask import Flask
from sqlalchemy import select, text

if TYPE_CHECKING:
    from bench.run_all import Measurement

DEFAULT_ROWS = 5_000_000
MAX_RATIO = 2.0
MAX_PEAK_RSS_MB = 125.0
MAX_NATIVE_RATIO = 1.0
MAX_NATIVE_BYTES_RATIO = 1.1
MAX_PARQUET_RATIO = 0.75
MAX_PARQUET_PEAK_RSS_MB = 215.0
MAX_PARQUET_BYTES_RATIO = 0.55
DATASETS = ["teams", "people", "shifts", "time_off_requests", "timesheet_entries"]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def package_rows() -> int:
    raw = os.environ.get("BENCH_PACKAGE_ROWS")
    rows = int(raw) if raw else DEFAULT_ROWS
    if rows < 10_000:
        raise SystemExit(f"BENCH_PACKAGE_ROWS must be at least 10,000, not {rows:,}")
    return rows


def _split(rows: int) -> dict[str, int]:
    """How many rows each dataset gets so that the five add up to `rows`."""
    from bench.dataset import TEAMS

    people = 2000
    shifts = rows // 5
    time_off = rows // 20
    return {
        "teams": len(TEAMS),
        "people": people,
        "shifts": shifts,
        "time_off_requests": time_off,
        "timesheet_entries": rows - len(TEAMS) - people - shifts - time_off,
    }


def prepare_package_workspace(app: Flask, rows: int) -> tuple[int, int, bool]:
    """(workspace id, its administrator's id, whether the rows had to be built)."""
    from app.extensions import db
    from app.models import Membership, Person, Workspace
    from app.services.workspace_export.coverage import reconcile_coverage
    from bench.dataset import ADMIN_EMAIL, _fill

    split = _split(rows)
    with app.app_context():
        # Production refuses to start while the registry and the declarations disagree; every
        # start-up of the app reconciles them (app/cli.py), and so must a fresh benchmark database.
        reconcile_coverage()
        admin = db.session.execute(select(Person).where(Person.email == ADMIN_EMAIL)).scalar_one_or_none()
        if admin is None:
            admin = Person(email=ADMIN_EMAIL, name="Benchmark Admin", password_hash="!")
            db.session.add(admin)
            db.session.flush()
        name = f"Benchmark package: {rows:,} rows"
        workspace = db.session.execute(select(Workspace).where(Workspace.name == name)).scalar_one_or_none()
        if workspace is None:
            workspace = Workspace(name=name, status="live", sandbox=False)
            db.session.add(workspace)
            db.session.flush()
            db.session.add(
                Membership(
                    workspace_id=workspace.id,
                    person_id=admin.id,
                    role="admin",
                    grants=[],
                    dataset_grants=DATASETS,
                    team_scope=None,
                )
            )
        # Executions (and their packages) left by an interrupted run; a finished run removes its own.
        db.session.execute(text("DELETE FROM data_export_executions WHERE workspace_id = :w"), {"w": workspace.id})
        db.session.commit()
        workspace_id, admin_id = workspace.id, admin.id
        present = {
            dataset: db.session.execute(
                text(f"SELECT count(*) FROM {table} WHERE workspace_id = :w"), {"w": workspace_id}
            ).scalar_one()
            for dataset, table in _tables().items()
        }
        if present == split:
            return workspace_id, admin_id, False
        for table in ("data_shifts", "data_time_off_requests"):
            db.session.execute(text(f"DELETE FROM {table} WHERE workspace_id = :w"), {"w": workspace_id})
        _fill(db, workspace_id, split["timesheet_entries"])
        _fill_shifts_and_time_off(db, workspace_id, split["shifts"], split["time_off_requests"])
        db.session.commit()
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table in _tables().values():
                conn.execute(text(f"VACUUM (FREEZE, ANALYZE) {table}"))
        return workspace_id, admin_id, True


def _tables() -> dict[str, str]:
    from app.domain.sources.catalog import DATASETS as CATALOG

    return {name: CATALOG[name].table.name for name in DATASETS}


def _fill_shifts_and_time_off(db, workspace_id: int, shifts: int, time_off: int) -> None:
    from app.seed_data import HOSTILE_VALUES

    people = """(SELECT id, team_id, team_name, full_name, row_number() OVER (ORDER BY id) - 1 AS k
                 FROM data_people WHERE workspace_id = :w) AS p ON p.k = g % 2000"""
    db.session.execute(
        text(
            f"""
            INSERT INTO data_shifts (workspace_id, team_id, team_name, person_id, person_name, role,
                                     starts_at, ends_at, break_minutes, notes)
            SELECT :w, p.team_id, p.team_name, p.id, p.full_name,
                   (ARRAY['Early', 'Late', 'Night', 'Weekend'])[1 + g % 4],
                   TIMESTAMPTZ '2023-01-02 06:00:00+00' + (g / 2000) * INTERVAL '1 day' + (g % 3) * INTERVAL '8 hours',
                   TIMESTAMPTZ '2023-01-02 14:00:00+00' + (g / 2000) * INTERVAL '1 day' + (g % 3) * INTERVAL '8 hours',
                   15 * (g % 4),
                   CASE WHEN g % 10 = 0
                        THEN (CAST(:hostile AS text[]))[1 + (g / 10) % cardinality(CAST(:hostile AS text[]))]
                        ELSE '' END
            FROM generate_series(0, :rows - 1) AS g JOIN {people}
            """
        ),
        {"w": workspace_id, "rows": shifts, "hostile": list(HOSTILE_VALUES)},
    )
    db.session.execute(
        text(
            f"""
            INSERT INTO data_time_off_requests (workspace_id, team_id, team_name, person_id, person_name, kind,
                                                status, starts_on, ends_on, days, reason, submitted_at)
            SELECT :w, p.team_id, p.team_name, p.id, p.full_name,
                   (ARRAY['annual', 'sick', 'parental', 'unpaid'])[1 + g % 4],
                   (ARRAY['pending', 'approved', 'declined'])[1 + g % 3],
                   DATE '2023-01-02' + g % 700, DATE '2023-01-02' + g % 700 + g % 5, 0.5 * (1 + g % 10),
                   CASE WHEN g % 7 = 0
                        THEN (CAST(:hostile AS text[]))[1 + (g / 7) % cardinality(CAST(:hostile AS text[]))]
                        ELSE 'Family visit' END,
                   TIMESTAMPTZ '2022-12-01 09:00:00+00' + g * INTERVAL '37 seconds'
            FROM generate_series(0, :rows - 1) AS g JOIN {people}
            """
        ),
        {"w": workspace_id, "rows": time_off, "hostile": list(HOSTILE_VALUES)},
    )


def package_plan(workspace_id: int, admin_id: int, rows: int):
    """The plan the cases read: the workspace; for `copy_zip` each dataset's select as SQL text; for
    `psql_copy_gzip` the package's own COPY statements and session settings."""
    import psycopg

    from app.data.package_snapshot import SESSION_SETTINGS, open_snapshot, packaged_datasets
    from app.domain.sources.catalog import DATASETS as CATALOG
    from app.rendering.package.zip_stream import DEFAULT_COMPRESSION_LEVEL
    from bench.cases import PackagePlan, _sql_text
    from bench.dataset import database_url, libpq_url

    dsn = libpq_url(database_url())
    datasets = packaged_datasets(DATASETS)
    selects = {}
    for dataset in datasets:
        table = CATALOG[dataset.name].table
        selects[dataset.name] = _sql_text(
            select(*(table.c[name] for name in dataset.column_names))
            .where(table.c.workspace_id == workspace_id)
            .order_by(table.c.id)
        )
    # The statements as the package's snapshot builds them, with their values bound the way psycopg
    # binds them when the package runs them (client-side), so psql runs the same text.
    with open_snapshot(workspace_id) as snapshot, psycopg.connect(dsn) as conn:
        copies = {dataset.name: psycopg.ClientCursor(conn).mogrify(*snapshot.csv_copy(dataset)) for dataset in datasets}
    return PackagePlan(
        workspace_id=workspace_id,
        admin_id=admin_id,
        rows=rows,
        dsn=dsn,
        datasets=DATASETS,
        selects=selects,
        compression_level=DEFAULT_COMPRESSION_LEVEL,
        copies=copies,
        session_settings=list(SESSION_SETTINGS),
    )


def native_anchor_line(rows: int, package: Measurement, native: Measurement) -> dict:
    """The CSV package against its own COPY statements run by psql and piped through gzip -6: the
    floor of reading every row once and deflating it once, in native code. The anchor's peak is
    its own process's plus those of psql and gzip."""
    return {
        "name": "package_csv",
        "rows": rows,
        "seconds": round(package.seconds, 2),
        "peak_rss_mb": round(package.peak_rss_mb, 1),
        "anchor": "psql_copy_gzip",
        "anchor_seconds": round(native.seconds, 2),
        "ratio": round(package.seconds / native.seconds, 2),
        "anchor_peak_rss_mb": round(native.total_peak_rss_mb, 1),
        "bytes": package.bytes,
        "anchor_bytes": native.bytes,
    }


def _bytes_ratio_target(name: str, case: Measurement, anchor: Measurement, limit: float, anchor_name: str) -> dict:
    from bench.run_all import _target

    return _target(name, round(case.bytes / anchor.bytes, 3), limit, "max", anchor=anchor_name)


def packages_suite(app: Flask, scratch_root: Path, repeat: int) -> None:
    from bench.run_all import _emit, _target, best_of, run_case

    rows = package_rows()
    workspace_id, admin_id, built = prepare_package_workspace(app, rows)
    _log(f"  package workspace of {rows:,} rows {'built' if built else 'reused'}")
    with app.app_context():
        plan = package_plan(workspace_id, admin_id, rows)
    anchors, native_anchors, packages, parquets = [], [], [], []
    for _ in range(repeat):
        anchors.append(run_case("copy_zip", plan, scratch_root))
        native_anchors.append(run_case("psql_copy_gzip", plan, scratch_root))
        packages.append(run_case("package_csv", plan, scratch_root))
        parquets.append(run_case("package_parquet", plan, scratch_root))
    anchor, native, package, parquet = best_of(anchors), best_of(native_anchors), best_of(packages), best_of(parquets)
    line = {
        "name": "package_csv",
        "rows": rows,
        "seconds": round(package.seconds, 2),
        "peak_rss_mb": round(package.peak_rss_mb, 1),
        "anchor": "copy_zip",
        "anchor_seconds": round(anchor.seconds, 2),
        "ratio": round(package.seconds / anchor.seconds, 2),
        "job_peak_rss_mb": None if package.work_peak_rss_mb is None else round(package.work_peak_rss_mb, 1),
        "anchor_peak_rss_mb": round(anchor.peak_rss_mb, 1),
        "bytes": package.bytes,
        "anchor_bytes": anchor.bytes,
    }
    _emit(line)
    _emit(_target("target_package_ratio", line["ratio"], MAX_RATIO, "max", anchor="copy_zip"))
    _emit(_target("target_package_peak_rss_mb", line["peak_rss_mb"], MAX_PEAK_RSS_MB, "max"))
    native_line = native_anchor_line(rows, package, native)
    _emit(native_line)
    _emit(
        _target("target_package_native_ratio", native_line["ratio"], MAX_NATIVE_RATIO, "max", anchor="psql_copy_gzip")
    )
    _emit(
        _bytes_ratio_target(
            "target_package_native_bytes_ratio", package, native, MAX_NATIVE_BYTES_RATIO, "psql_copy_gzip"
        )
    )
    parquet_line = {
        "name": "package_parquet",
        "rows": rows,
        "seconds": round(parquet.seconds, 2),
        "peak_rss_mb": round(parquet.peak_rss_mb, 1),
        "bytes": parquet.bytes,
        "anchor": "package_csv",
        "anchor_seconds": round(package.seconds, 2),
        "ratio": round(parquet.seconds / package.seconds, 2),
        "anchor_bytes": package.bytes,
    }
    _emit(parquet_line)
    _emit(_target("target_parquet_ratio", parquet_line["ratio"], MAX_PARQUET_RATIO, "max", anchor="package_csv"))
    _emit(_target("target_parquet_peak_rss_mb", parquet_line["peak_rss_mb"], MAX_PARQUET_PEAK_RSS_MB, "max"))
    _emit(_bytes_ratio_target("target_parquet_bytes_ratio", parquet, package, MAX_PARQUET_BYTES_RATIO, "package_csv"))
