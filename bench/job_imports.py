"""The imports suite: what each kind of job holds once loaded, `python -m bench.job_imports KIND`.

An RQ worker builds its app and imports every kind's job module (jobs/worker.py, `ready_to_fork`),
then forks a work-horse per job, which loads what its work picks (a writer, a store). Each kind is
measured in a fresh interpreter that does the same without the fork: what the worker does before
it forks, then the job's module and its work's choice, then the resident set (VmRSS) and the
modules loaded. Forking would change nothing: the
horse's resident set is the parent's pages it shares plus what it loads itself.

    {"name": "job_import_rss", "kind": "export_file", "rss_mb": 80.4, "modules": 856,
     "libraries": ["app", "flask", …]}

`libraries` are the top-level packages outside the standard library; `heavy` those of them that
a kind's work alone should pay for (reportlab and the shapers, openpyxl, pyarrow, boto3's client,
paramiko).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent

HEAVY = ("reportlab", "uharfbuzz", "bidi", "openpyxl", "pyarrow", "boto3", "paramiko", "PIL", "lxml", "numpy")

# Each kind: the job's module, and the work its job picks after loading (Python source).
KINDS: dict[str, tuple[str | None, str]] = {
    "worker": (None, ""),
    "export_file_csv": (
        "jobs.export_file",
        "from app.storage import storage_from_url; storage_from_url('file:///tmp/bench-job-imports', 8 << 20)",
    ),
    "export_file_report_pdf": (
        "jobs.export_file",
        "from app.services.files.report_file_production import report_writer; report_writer('pdf')",
    ),
    "export_file_report_xlsx": (
        "jobs.export_file",
        "from app.services.files.report_file_production import report_writer; report_writer('xlsx')",
    ),
    "schedule_run": ("jobs.schedule_run", ""),
    "package_execution": ("jobs.package_execution", ""),
    "package_delivery": ("jobs.package_delivery", ""),
    "tick": ("jobs.tick", ""),
}


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("/proc/self/status has no VmRSS line; the benchmark needs Linux")


def measure(kind: str) -> dict:
    """Load what a job of this kind loads, in this process, and say what it holds."""
    from jobs.worker import ready_to_fork

    module, work = KINDS[kind]
    ready_to_fork()
    if module is not None:
        __import__(module)
    exec(work)
    # This module's own package is the harness, not the job's.
    loaded = {m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - {"bench"}
    libraries = sorted(name for name in loaded if name[0] != "_")
    return {
        "name": "job_import_rss",
        "kind": kind,
        "rss_mb": round(_rss_mb(), 1),
        "modules": len(sys.modules),
        "heavy": [name for name in HEAVY if name in libraries],
        "libraries": libraries,
    }


def job_imports_suite(environment: dict[str, str]) -> list[dict]:
    """One line per kind, each measured in its own interpreter."""
    lines = []
    for kind in KINDS:
        done = subprocess.run(
            [sys.executable, "-m", "bench.job_imports", kind],
            cwd=PROJECT_ROOT,
            env={**os.environ, **environment},
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        )
        lines.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return lines


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])), flush=True)
