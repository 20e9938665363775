"""The rule that keeps a CSV text from being read as a formula by a spreadsheet (OWASP "CSV injection").

A spreadsheet reads a cell that begins with `=`, `+`, `-` or `@` as a formula; a leading tab,
carriage return or line feed can hide such a character, and so can blank characters in front of
it once a reader trims spaces (LibreOffice's "trim spaces"), or invisible ones (no-break and
zero-width spaces). Quoting the field is not enough either: opened with `;` or a tab as the
separator, a spreadsheet splits a quoted `x;=1+1;y` at its `;` (and a row at a line feed inside
quotes), so a trigger after one of those characters starts a cell of its own.

The rule: a single quote `'` goes at the start of the text when its first character that is
neither blank nor a double quote is a trigger, and right after every `;`, tab, carriage return
or line feed inside it that is followed, in the same way, by `=`, `+`, `-` or `@`. Behind a break,
a further break is no trigger: it gets its own `'` if a trigger follows it. So a Windows line
break (CR LF) is one break, and an empty line between paragraphs adds nothing; only the cell that
really starts with a trigger is guarded. Every spreadsheet shows a leading `'` as text. Only
text is guarded: numbers, dates and booleans are written as what they are, so `-42` in a
number column stays a number.

The rule lives here, below both its users: the Python formatter (app/rendering/neutralise.py)
runs these patterns in `re`; the SQL that formats cells for PostgreSQL's COPY
(app/data/csv_copy.py) settles most texts from these character sets with cheap string functions
and runs the break pattern, in PostgreSQL's regular expressions, only on texts holding a break.
"""

from __future__ import annotations

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\n")
# Characters a reader may trim or not show, so a trigger behind them still counts.
BLANKS = (
    " \x0b\x0c\x85\xa0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u200b\u200c\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff"
)
# Characters after which a spreadsheet may start a new cell when it splits a line differently.
CELL_BREAKS = ";\t\r\n"
# What may stand in front of a trigger without hiding it: blanks, and double quotes.
LEADING_CHARACTERS = BLANKS + '"'

_TRIGGER_CLASS = "[=+@\t\r\n-]"
# The triggers that count behind a break: the breaks among the triggers are breaks of their own.
_TRIGGER_BEHIND_BREAK_CLASS = "[=+@-]"
_LEAD = f"[{LEADING_CHARACTERS}]*"

# The text's start needs a `'`: matched from the start of the text.
GUARDED_START_PATTERN = f"{_LEAD}{_TRIGGER_CLASS}"
# Each cell break that needs a `'` after it: group 1 is the break, kept; the rest is a look-ahead.
GUARDED_BREAK_PATTERN = f"([{CELL_BREAKS}])(?={_LEAD}{_TRIGGER_BEHIND_BREAK_CLASS})"
# Whether a text needs a `'` anywhere: one scan, which most texts pass unchanged. (A break with
# no trigger behind it matches too; the guard then adds nothing.)
NEEDS_GUARD_PATTERN = f"^{GUARDED_START_PATTERN}|[{CELL_BREAKS}]"
