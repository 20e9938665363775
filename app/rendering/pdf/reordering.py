"""Bidirectional text in visual order, line by line, with the levels of its whole paragraph.

The Unicode bidi algorithm (UAX #9) resolves embedding levels on a paragraph (a cell's text
between line breaks) and only then reorders each line on its own (rules L1 and L2). Reordering
each wrapped line as a paragraph of its own lets a line pick its own direction and its own
resolution of the neutrals: "nurse in charge / שרה כהן and then / confirmed…" would print the
name after "and then", which changes who did what.

python-bidi resolves the levels (its Rust implementation, unicode-bidi, with isolates) but
offers them only in its debug description, one level per UTF-8 byte; `paragraph_levels` reads
them there, checks their count, and `visual_order` applies L1 and L2 to a line's share of
them. Mirroring (L4) is left out, as `bidi.get_display` leaves it out.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from bidi import get_display

# The debug description lists the levels after the text, which it prints quoted and escaped,
# so this heading (a newline and four spaces) cannot come from the text.
_LEVELS_SECTION = re.compile(r"\n    levels: \[\n(.*?)\n    \],", re.S)
_PARAGRAPH_LEVEL = re.compile(r"\n    paragraphs: \[.*?level: Level\(\s*(\d+),?\s*\)", re.S)
_LEVEL = re.compile(r"Level\(\s*(\d+),?\s*\)")
# Rule L1: white space and isolate controls before the end of a line take the paragraph's level.
_RESET_AT_LINE_END = frozenset({"WS", "FSI", "LRI", "RLI", "PDI", "BN", "S", "B"})


class BidiLevelsUnreadable(RuntimeError):
    """python-bidi's description of its levels changed shape (a new version): this module needs updating.

    Outside DomainError: a fault of this code, never of the person's report."""


@lru_cache(maxsize=4_096)
def paragraph_levels(paragraph: str) -> tuple[int, tuple[int, ...]]:
    """The paragraph's base level (0 left to right, 1 right to left) and each character's
    resolved embedding level, by python-bidi (UAX #9 up to rule I2)."""
    if not paragraph:
        return 0, ()
    description = get_display(paragraph, debug=True)
    section = _LEVELS_SECTION.search(description)
    base = _PARAGRAPH_LEVEL.search(description, section.end()) if section else None
    by_byte = [int(level) for level in _LEVEL.findall(section.group(1))] if section else []
    encoded = [len(char.encode("utf-8")) for char in paragraph]
    if base is None or len(by_byte) != sum(encoded):
        raise BidiLevelsUnreadable(f"python-bidi's levels could not be read for a {len(paragraph)}-character text")
    levels = []
    offset = 0
    for size in encoded:
        levels.append(by_byte[offset])
        offset += size
    return int(base.group(1)), tuple(levels)


def visual_order(line: str, levels: tuple[int, ...] | list[int], base: int) -> str:
    """``line`` in the order its characters are drawn, left to right, from its share of the
    paragraph's levels: L1 (white space at the line's end takes the paragraph's level), then L2
    (from the highest level down to the lowest odd one, reverse every run at that level or higher)."""
    if len(levels) != len(line):
        raise ValueError("a line needs one level for each of its characters")
    resolved = list(levels)
    end = len(line)
    while end and unicodedata.bidirectional(line[end - 1]) in _RESET_AT_LINE_END:
        end -= 1
        resolved[end] = base
    characters = list(line)
    odd = [level for level in resolved if level % 2]
    if not odd:
        return line
    for level in range(max(resolved), min(odd) - 1, -1):
        start = None
        for index in range(len(characters) + 1):
            inside = index < len(characters) and resolved[index] >= level
            if inside and start is None:
                start = index
            elif not inside and start is not None:
                characters[start:index] = characters[start:index][::-1]
                resolved[start:index] = resolved[start:index][::-1]
                start = None
    return "".join(characters)
