"""What each kind of job loads: a worker forks a work-horse per job, so whatever the worker holds
before it forks, every job holds (the job modules of every kind among it, imported once rather
than in each horse), and each job adds what its work picks.

Each case starts a fresh interpreter, does what `python -m jobs.worker` does before it forks
(builds its app and imports the job modules: `ready_to_fork`), imports the job's entry point and, where the work picks a
writer or a store, asks for that one; then it lists the libraries loaded (top-level packages
outside the standard library). A library outside the kind's list fails the case, naming it: a new
import that makes every job carry reportlab, boto3 or pyarrow is caught here, not in a bench run.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# What the worker holds before it forks: Flask and its extensions, SQLAlchemy and the database
# driver, RQ and Redis (with its C parser, hiredis, where installed), the metrics client.
# botocore's exceptions alone: app.destinations tells a transient failure from a permanent one by
# their class (boto3 and botocore's client load only when an S3 store or destination is opened);
# cryptography: RQ's Redis client and the stored secrets' Fernet. And the job modules' own, which
# the worker imports before it forks (jobs/worker.py): cronsim for the timetables, zlib-ng with
# which a package's volumes deflate (app/rendering/package/zip_stream.py).
WORKER = frozenset(
    {
        "app",
        "jobs",
        "blinker",
        "botocore",
        "brotli",
        "click",
        "cronsim",
        "cryptography",
        "cython_runtime",
        "flask",
        "flask_htmx",
        "flask_login",
        "flask_sqlalchemy",
        "flask_wtf",
        "greenlet",
        "hiredis",
        "idna",
        "itsdangerous",
        "jinja2",
        "markupsafe",
        "prometheus_client",
        "psycopg",
        "psycopg_binary",
        "psycopg_c",
        "redis",
        "rq",
        "sqlalchemy",
        "typing_extensions",
        "urllib3",
        "werkzeug",
        "wtforms",
        "zlib_ng",
    }
)
PDF = frozenset({"reportlab", "uharfbuzz", "bidi", "rlbidi", "PIL", "charset_normalizer", "chardet", "rl_accel"})
# openpyxl loads lxml, Pillow and NumPy where they are installed.
OPENPYXL = frozenset({"openpyxl", "et_xmlfile", "lxml", "PIL", "numpy"})

# A Parquet package: pyarrow writes it (and loads NumPy itself), and on PostgreSQL the ADBC driver
# reads its rows through the driver manager's low-level API (its DB-API module would load pandas);
# the driver finds its library with the importlib_resources backport.
PARQUET = frozenset({"pyarrow", "numpy", "adbc_driver_manager", "adbc_driver_postgresql", "importlib_resources"})

# The work each case asks for after importing the job, as Python run in the probe.
CSV_FILE = (
    "from app.services.files.export_runner import WRITERS; from app.models.export_file import FileKind;"
    " WRITERS[FileKind.QUERY]"
)
FILE_STORAGE = "from app.storage import storage_from_url; storage_from_url('file:///tmp/i31-probe', 8 << 20)"
REPORT_PDF = "from app.services.files.report_file_production import report_writer; report_writer('pdf')"
REPORT_XLSX = "from app.services.files.report_file_production import report_writer; report_writer('xlsx')"
# The reader's first batch loads the driver, then fails to connect (nothing listens on port 1).
PARQUET_PACKAGE = """
import app.rendering.package.parquet_volumes
from app.data.package_snapshot import _arrow_batches
try:
    next(_arrow_batches("postgresql://127.0.0.1:1/none", "", ""))
except Exception:
    pass
"""

PROBE = """
import json, sys
from jobs.worker import ready_to_fork
ready_to_fork()
__import__(sys.argv[1])
exec(sys.argv[2])
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules} - set(sys.stdlib_module_names))))
"""

CASES = {
    "export_file, a CSV file in a storage folder": ("jobs.export_file", f"{CSV_FILE}; {FILE_STORAGE}", WORKER),
    "export_file, a report as PDF": ("jobs.export_file", REPORT_PDF, WORKER | PDF),
    "export_file, a report as XLSX": ("jobs.export_file", REPORT_XLSX, WORKER | OPENPYXL),
    "schedule_run": ("jobs.schedule_run", "", WORKER),
    "package_execution": ("jobs.package_execution", "", WORKER),
    "package_execution, a Parquet package": ("jobs.package_execution", PARQUET_PACKAGE, WORKER | PARQUET),
    "package_delivery": ("jobs.package_delivery", "", WORKER),
    "tick": ("jobs.tick", "", WORKER),
}


@functools.cache
def _libraries_loaded(module: str, work: str) -> frozenset[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, work], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return frozenset(name for name in json.loads(done.stdout.strip().splitlines()[-1]) if not name.startswith("_"))


@pytest.mark.parametrize(("module", "work", "allowed"), CASES.values(), ids=CASES.keys())
def test_a_job_loads_only_the_libraries_of_its_kind(module, work, allowed):
    assert _libraries_loaded(module, work) - allowed == set()


def test_the_worker_freezes_what_it_holds_before_it_forks():
    """A horse's garbage collections then walk the job's objects, not the app's."""
    probe = (
        "import gc, json; from jobs.worker import ready_to_fork; ready_to_fork();"
        " print(json.dumps([gc.get_freeze_count(), len(gc.get_objects())]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    frozen, still_collected = json.loads(done.stdout.strip().splitlines()[-1])
    assert frozen > 50_000
    assert still_collected < frozen / 100


def test_a_report_as_pdf_does_load_the_shaper_and_one_as_xlsx_does_not():
    """The lists above are not loose: the PDF case really loads what only it may."""
    assert {"reportlab", "uharfbuzz", "bidi"} <= _libraries_loaded("jobs.export_file", REPORT_PDF)
    assert not {"reportlab", "uharfbuzz", "bidi"} & _libraries_loaded("jobs.export_file", REPORT_XLSX)
    assert "openpyxl" in _libraries_loaded("jobs.export_file", REPORT_XLSX)
