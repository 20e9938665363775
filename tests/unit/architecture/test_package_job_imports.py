"""What a package job loads. The writers' imports are kept by the import contracts (pyproject.toml,
`make lint`); this checks what a running process pays for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_producing_a_package_loads_pyarrow_only_for_a_parquet_one():
    """pyarrow costs a process about 50 MB; a CSV or JSON Lines package job never pays it."""
    probe = (
        "import sys, app.services.workspace_export.package_production, app.rendering.package.manifest;"
        " print('pyarrow' in sys.modules)"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip().splitlines()[-1] == "False"
