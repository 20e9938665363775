"""The import contracts (pyproject.toml [tool.importlinter], run by `make lint`) refuse an upward
import, and an import across capabilities the design does not state: checked on a copy of the code
with such imports added, so the contracts are known to bite."""

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


def _lint_imports(code: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=code,
        capture_output=True,
        text=True,
        # Wide enough that a long import stays on one line of the report.
        env={"PYTHONPATH": str(code), "COLUMNS": "250"},
    )


def test_an_upward_import_between_layers_and_between_capabilities_breaks_the_contracts(tmp_path):
    code = _copy_of_the_code(tmp_path)
    _add_import(code / "app" / "domain" / "values" / "text_rules.py", "from app.blueprints import guards")
    _add_import(
        code / "app" / "services" / "files" / "file_cancellation.py", "from app.services.schedules import schedules"
    )
    _add_import(
        code / "app" / "domain" / "files" / "export_file.py", "from app.domain.workspace_export import export_package"
    )

    checked = _lint_imports(code)

    assert checked.returncode != 0
    assert "app.domain.values.text_rules -> app.blueprints.guards" in checked.stdout
    assert "app.services.files.file_cancellation -> app.services.schedules.schedules" in checked.stdout
    assert "app.domain.files.export_file -> app.domain.workspace_export.export_package" in checked.stdout


def test_an_import_across_capabilities_that_the_design_does_not_state_breaks_the_contracts(tmp_path):
    code = _copy_of_the_code(tmp_path)
    app = code / "app"
    _add_import(app / "blueprints" / "staff" / "routes.py", "from app.blueprints.packages import routes")
    _add_import(
        app / "services" / "workspace_export" / "package_history.py", "from app.domain.schedules import schedule_run"
    )
    _add_import(app / "domain" / "workspace_export" / "export_package.py", "from app.models import export_file")
    _add_import(app / "services" / "sources" / "reports.py", "from app.models.schedule import Schedule")
    _add_import(app / "models" / "export_file.py", "from app.models.query import SavedQuery")
    _add_import(app / "services" / "pages" / "list_pages.py", "from app.services.files import file_library")

    checked = _lint_imports(code)

    assert checked.returncode != 0
    for crossing in (
        "app.blueprints.staff.routes -> app.blueprints.packages.routes",
        "app.services.workspace_export.package_history -> app.domain.schedules.schedule_run",
        "app.domain.workspace_export.export_package -> app.models.export_file",
        "app.services.sources.reports -> app.models.schedule",
        "app.models.export_file -> app.models.query",
        "app.services.pages.list_pages -> app.services.files.file_library",
    ):
        assert crossing in checked.stdout
