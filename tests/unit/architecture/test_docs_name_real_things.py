"""The README and docs/ name files, folders and Python names in backticks; each must exist, so the
docs cannot drift from the tree unnoticed (a renamed module fails here until its docs follow)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCUMENTS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BACKTICKED = re.compile(r"`([^`\n]+)`")
# A path inside the project: a top-level folder of it, then path segments (a `:line` suffix allowed).
PROJECT_PATH = re.compile(r"((?:app|jobs|bench|tests|docs|migrations|scripts|\.ci)/[\w./-]*?)(?::\d+)?/?")
# A dotted Python name rooted at one of the project's packages: `app.services.work.engine.redeliver_lapsed`.
DOTTED_NAME = re.compile(r"(?!.*\.(?:css|js|html|py|json|md|txt)$)((?:app|jobs|bench)(?:\.\w+)+)(?:\(\))?")
# A file named on its own: `leases.py`, `app.css`, `form.html`.
FILE_NAME = re.compile(r"([\w-]+\.(?:py|css|js|html))")
SEARCHED_FOR_FILES = ("app", "jobs", "bench", "tests", "migrations")


def _named(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    return sorted(
        {
            (document.relative_to(ROOT).as_posix(), match.group(1))
            for document in DOCUMENTS
            for quoted in BACKTICKED.findall(document.read_text(encoding="utf-8"))
            if (match := pattern.fullmatch(quoted.strip()))
        }
    )


def _resolves(dotted: str) -> bool:
    """Whether the longest importable prefix of `dotted` is a module holding the rest as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def _project_file_names() -> set[str]:
    in_folders = {path.name for folder in SEARCHED_FOR_FILES for path in (ROOT / folder).rglob("*") if path.is_file()}
    return in_folders | {path.name for path in ROOT.glob("*.py")}


def test_the_docs_name_paths_dotted_names_and_files_at_all():
    assert len(_named(PROJECT_PATH)) > 50 and len(_named(DOTTED_NAME)) > 10 and len(_named(FILE_NAME)) > 10


@pytest.mark.parametrize(("document", "path"), _named(PROJECT_PATH))
def test_every_path_the_docs_name_exists(document, path):
    assert (ROOT / path).exists(), f"{document} names {path}, which is not in the tree"


@pytest.mark.parametrize(("document", "name"), _named(DOTTED_NAME))
def test_every_dotted_name_the_docs_give_can_be_imported(document, name):
    assert _resolves(name), f"{document} names {name}, which does not exist"


def test_every_file_the_docs_name_on_its_own_exists_somewhere_in_the_project():
    files = _project_file_names()
    missing = [(document, name) for document, name in _named(FILE_NAME) if name not in files]
    assert missing == []
