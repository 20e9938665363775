"""One rule per fact: no block of code stands twice in app/.

Two checks. No run of six lines stands twice word for word (Python, templates, scripts and styles;
vendored files aside): blank lines, comments, import statements and lone brackets do not count
toward a run, so the same six statements are caught however they are spaced, and two calls that
merely end alike, or two modules importing the same names, are not. And no block of ten Python
lines stands twice with the same shape: its names and literals replaced by placeholders (the same
name by the same placeholder within the block), so a block copied and renamed is caught too.
Windows of declarations alone (constants, enum members, column lists) are not blocks of code: a
shape counts only with at least two statements (def, if, for, return, …) among its lines. The
pairs kept on purpose are in KEPT_SHAPES, each with the reason it stays.
"""

from __future__ import annotations

import ast
import functools
import io
import keyword
import tokenize
from collections import defaultdict
from pathlib import Path

APP = Path(__file__).resolve().parents[3] / "app"
RUN_LINES = 6
SHAPE_LINES = 10
CODE_SUFFIXES = (".py", ".html", ".js", ".css")
# A window of shaped lines is code, not a table of declarations, when this many start with one of these.
STATEMENTS_IN_A_BLOCK = 2
_STATEMENTS = {"def", "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "return", "raise"}
_NOT_SHAPE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
_BRACKETS = set(")]},:")

# Same-shape blocks kept on purpose: the files they stand in, and why they stay.
KEPT_SHAPES: dict[tuple[str, ...], str] = {
    ("blueprints/queries/routes.py", "blueprints/reports/routes.py"): (
        "The edit page of a saved query and of a report follow the same steps (show the form, rework it, "
        "save, refuse, confirm), each with its own capability's form, service and wording; one helper "
        "would take each of those as an argument and read worse than the two routes."
    ),
}


def _sources(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    return [
        path
        for path in sorted(root.rglob("*"))
        if path.suffix in suffixes and "vendor" not in path.relative_to(root).parts
    ]


def _import_lines(path: Path, text: str) -> set[int]:
    try:
        tree = ast.parse(text) if path.suffix == ".py" else None
    except SyntaxError:  # a fragment the tests write; app/ itself always parses
        tree = None
    if tree is None:
        return set()
    return {
        number
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }


def _counted_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines that count: longer than a bracket and its comma,
    neither a comment nor part of an import."""
    text = path.read_text(encoding="utf-8")
    imports = _import_lines(path, text)
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if len(line.strip()) > 3 and not line.strip().startswith("#") and number not in imports
    ]


def repeated_runs(root: Path) -> list[list[str]]:
    """Each run of RUN_LINES counted lines found in more than one place below `root`, as its places."""
    places: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for path in _sources(root, CODE_SUFFIXES):
        lines = _counted_lines(path)
        for start in range(len(lines) - RUN_LINES + 1):
            run = tuple(text for _, text in lines[start : start + RUN_LINES])
            places[run].append(f"{path.relative_to(root)}:{lines[start][0]}")
    return [where for where in places.values() if len(where) > 1]


def _shaped_lines(path: Path) -> list[tuple[int, list[str]]]:
    """Each line of code as its tokens: a name marked as one (to be numbered per block), every
    literal as `L`, keywords and operators as written. Imports, comments and lines of brackets drop out."""
    text = path.read_text(encoding="utf-8")
    imports = _import_lines(path, text)
    tokens: dict[int, list[str]] = defaultdict(list)
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        line = token.start[0]
        if token.type in _NOT_SHAPE or line in imports:
            continue
        if token.type == tokenize.NAME and not keyword.iskeyword(token.string):
            tokens[line].append("\0" + token.string)
        elif token.type in (tokenize.NUMBER, tokenize.STRING):
            tokens[line].append("L")
        else:
            tokens[line].append(token.string)
    return [(line, shape) for line, shape in sorted(tokens.items()) if sum(t not in _BRACKETS for t in shape) > 1]


def _shape(window: list[tuple[int, list[str]]]) -> str:
    """The window's lines with each name numbered by its first use in the window."""
    numbers: dict[str, str] = {}
    return "\n".join(
        " ".join(numbers.setdefault(t, f"n{len(numbers)}") if t.startswith("\0") else t for t in tokens)
        for _, tokens in window
    )


def same_shape_blocks(root: Path) -> dict[tuple[str, ...], list[str]]:
    """Each shape of SHAPE_LINES lines of code found in more than one place below `root`: the files
    it stands in, and its first places. Windows overlapping within one file (a chain of like
    statements) are one place, not a repeat."""
    places: dict[str, list[tuple[Path, int, int]]] = defaultdict(list)
    for path in _sources(root, (".py",)):
        lines = _shaped_lines(path)
        for start in range(len(lines) - SHAPE_LINES + 1):
            window = lines[start : start + SHAPE_LINES]
            if sum(tokens[0] in _STATEMENTS for _, tokens in window) >= STATEMENTS_IN_A_BLOCK:
                places[_shape(window)].append((path, start, window[0][0]))
    blocks: dict[tuple[str, ...], list[str]] = {}
    for found in places.values():
        apart = [
            (path, line)
            for index, (path, start, line) in enumerate(found)
            if not any(other == path and start - earlier < SHAPE_LINES for other, earlier, _ in found[:index])
        ]
        if len(apart) > 1:
            files = tuple(sorted({str(path.relative_to(root)) for path, _ in apart}))
            blocks.setdefault(files, [f"{path.relative_to(root)}:{line}" for path, line in apart])
    return blocks


def test_no_six_lines_of_code_stand_twice_in_app():
    assert repeated_runs(APP) == []


@functools.cache
def _app_shapes() -> dict[tuple[str, ...], list[str]]:
    return same_shape_blocks(APP)


def test_no_ten_lines_of_code_stand_twice_in_app_under_other_names():
    unexplained = {files: where for files, where in _app_shapes().items() if files not in KEPT_SHAPES}
    assert unexplained == {}


def test_every_kept_shape_is_still_found_and_explained():
    found = _app_shapes()
    assert all(files in found and reason for files, reason in KEPT_SHAPES.items())


def test_the_check_finds_six_lines_written_twice_however_spaced(tmp_path):
    block = [
        "total = 0",
        "for row in rows:",
        "    total += row.hours",
        "    seen.add(row.id)",
        "report(total)",
        "return seen",
    ]
    (tmp_path / "one.py").write_text("def a(rows, seen):\n" + "\n".join(f"    {line}" for line in block) + "\n")
    spaced = "\n\n    # the same again\n".join(f"    {line}" for line in block)
    (tmp_path / "two.py").write_text(f"def b(rows, seen):\n{spaced}\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "three.py").write_text("\n".join(block) + "\n")

    assert repeated_runs(tmp_path) == [["one.py:2", "two.py:2"]]


def test_the_check_does_not_count_lone_brackets_or_comments(tmp_path):
    closing = ["# done", ")", "},", "]", ")", "},"]
    for name in ("one.py", "two.py"):
        (tmp_path / name).write_text("x = 1\n" + "\n".join(closing * 2) + f"\nname = {name[:3]!r}\n")

    assert repeated_runs(tmp_path) == []


def test_the_check_does_not_count_imports(tmp_path):
    imports = "from app.models.types import (\n" + "".join(f"    name_{n},\n" for n in range(8)) + ")\n"
    (tmp_path / "one.py").write_text(imports + "ONE = 1\n")
    (tmp_path / "two.py").write_text(imports + "TWO = 2\n")

    assert repeated_runs(tmp_path) == []
    assert same_shape_blocks(tmp_path) == {}


_SETTLE = """
def settle_{noun}({noun}_id, attempt, code, now=None):
    at = moment(now)
    row = session.execute(
        update({model})
        .where({model}.id == {noun}_id, {model}.attempt == attempt)
        .values(status="{status}", code=code[:{limit}], settled_at=at)
    ).one_or_none()
    if row is None:
        session.rollback()
        raise Refused(f"{noun} {{{noun}_id}} cannot settle now")
    session.commit()
    return row
"""


def test_the_shape_check_finds_a_block_written_twice_under_other_names(tmp_path):
    (tmp_path / "files.py").write_text(_SETTLE.format(noun="file", model="ExportFile", status="failed", limit=60))
    (tmp_path / "runs.py").write_text(_SETTLE.format(noun="run", model="ScheduleRun", status="done", limit=80))

    assert same_shape_blocks(tmp_path) == {("files.py", "runs.py"): ["files.py:2", "runs.py:2"]}
    assert repeated_runs(tmp_path) == []


def test_the_shape_check_leaves_tables_of_declarations_and_chains_of_like_statements(tmp_path):
    constants = "".join(f"LIMIT_{n} = {n}\n" for n in range(12))
    chain = "def kind(a):\n" + "".join(f"    if a.is_{n}:\n        return 'kind {n}'\n" for n in range(12))
    (tmp_path / "one.py").write_text(constants + chain)
    (tmp_path / "two.py").write_text(constants.replace("LIMIT", "SIZE"))

    assert same_shape_blocks(tmp_path) == {}
