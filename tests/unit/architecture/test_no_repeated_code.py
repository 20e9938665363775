"""One rule per fact: no run of six lines of code stands twice in app/ (Python, templates, scripts
and styles; vendored files aside). Blank lines, comments and lone brackets do not count toward a
run, so the same six statements are caught however they are spaced, and two calls that merely
end alike are not."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

APP = Path(__file__).resolve().parents[3] / "app"
RUN_LINES = 6
CODE_SUFFIXES = (".py", ".html", ".js", ".css")


def _counted_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines that count: longer than a bracket and its comma."""
    numbered = enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
    return [
        (number, text.strip())
        for number, text in numbered
        if len(text.strip()) > 3 and not text.strip().startswith("#")
    ]


def repeated_runs(root: Path) -> list[list[str]]:
    """Each run of RUN_LINES counted lines found in more than one place below `root`, as its places."""
    places: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*")):
        if path.suffix not in CODE_SUFFIXES or "vendor" in path.relative_to(root).parts:
            continue
        lines = _counted_lines(path)
        for start in range(len(lines) - RUN_LINES + 1):
            run = tuple(text for _, text in lines[start : start + RUN_LINES])
            places[run].append(f"{path.relative_to(root)}:{lines[start][0]}")
    return [where for where in places.values() if len(where) > 1]


def test_no_six_lines_of_code_stand_twice_in_app():
    assert repeated_runs(APP) == []


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
