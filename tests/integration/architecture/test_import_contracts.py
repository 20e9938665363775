"""The import contracts (pyproject.toml [tool.importlinter], run by `make lint`) refuse an upward
import: checked on a copy of the code with upward imports added, so the contracts are known to bite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _copy_of_the_code(destination: Path) -> Path:
    for package in ("app", "jobs"):
        shutil.copytree(ROOT / package, destination / package, ignore=shutil.ignore_patterns("__pycache__", "static"))
    shutil.copy(ROOT / "pyproject.toml", destination / "pyproject.toml")
    return destination


def _add_import(module: Path, statement: str) -> None:
    module.write_text(module.read_text(encoding="utf-8") + f"\n{statement}  # noqa\n", encoding="utf-8")


def test_an_upward_import_between_layers_and_between_capabilities_breaks_the_contracts(tmp_path):
    code = _copy_of_the_code(tmp_path)
    _add_import(code / "app" / "domain" / "values" / "text_rules.py", "from app.blueprints import guards")
    _add_import(
        code / "app" / "services" / "files" / "file_cancellation.py", "from app.services.schedules import schedules"
    )
    _add_import(
        code / "app" / "domain" / "files" / "export_file.py", "from app.domain.workspace_export import export_package"
    )

    checked = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=code, capture_output=True, text=True, env={"PYTHONPATH": str(code)}
    )

    assert checked.returncode != 0
    assert "app.domain.values.text_rules -> app.blueprints.guards" in checked.stdout
    assert "app.services.files.file_cancellation -> app.services.schedules.schedules" in checked.stdout
    assert "app.domain.files.export_file -> app.domain.workspace_export.export_package" in checked.stdout
