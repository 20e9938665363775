"""Data files the demo seed and the tests share."""

import re
import unicodedata
from pathlib import Path

_HEX_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")
_NAME_JOINERS = re.compile(r"[ '-]")


def _load_hostile_values() -> tuple[str, ...]:
    """Values every export, preview, PDF and email must carry through intact (or neutralised).

    One per line in hostile-values.txt; "\\n", "\\t" and "\\r" stand for the control characters,
    "\\xHH" for the character with that hex code.
    """
    lines = (Path(__file__).parent / "hostile-values.txt").read_text(encoding="utf-8").splitlines()
    values = [line for line in lines if line and not line.startswith("# ")]
    return tuple(_decoded(value) for value in values)


def _decoded(value: str) -> str:
    value = value.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r")
    return _HEX_ESCAPE.sub(lambda match: chr(int(match.group(1), 16)), value)


def reads_as_a_name(value: str) -> bool:
    """True for a value someone could be called: words of letters (with their combining marks) in
    any script, joined by single spaces, hyphens or apostrophes. "Дмитрий Шостакович" is one;
    "=1+2", "'already quoted" and "  padded  " are not."""
    words = _NAME_JOINERS.split(value)
    return all(word and all(unicodedata.category(c)[0] in "LM" for c in word) for word in words)


HOSTILE_VALUES = _load_hostile_values()
