"""Data files the demo seed and the tests share."""

from pathlib import Path


def _load_hostile_values() -> tuple[str, ...]:
    """Values every export, preview, PDF and email must carry through intact (or neutralised).

    One per line in hostile-values.txt; "\\n", "\\t" and "\\r" stand for the control characters.
    """
    lines = (Path(__file__).parent / "hostile-values.txt").read_text(encoding="utf-8").splitlines()
    values = [line for line in lines if line and not line.startswith("# ")]
    return tuple(v.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r") for v in values)


HOSTILE_VALUES = _load_hostile_values()
