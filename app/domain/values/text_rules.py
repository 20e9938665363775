"""What every value typed into a form must be before it is stored or sent to the database.

PostgreSQL text cannot hold the NUL character, and UTF-8 cannot encode a lone surrogate, so a
value holding either is refused here with a message, before any statement would fail on it.
Whole numbers are ASCII digits only: Python's int() also reads "٣", "1_000" and " 7 ", which a
form should not, and ids are bounded by the database's integer column.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from app.domain.errors import ValidationError

# The range of a PostgreSQL `integer` (int4), the type of every id and version.
DATABASE_INTEGER_MAX = 2**31 - 1
DATABASE_INTEGER_MIN = -(2**31)

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
# Longer than any number a form accepts, short enough that int() never meets Python's digit limit.
_MAX_DIGITS = 30


# Every character that starts a new line somewhere: CR and LF, the vertical tab and form feed, the
# file, group and record separators (str.splitlines breaks at them), NEL (U+0085) and Unicode's
# line and paragraph separators. A name or a subject holding one would show as two lines in a list
# or break an email header.
LINE_BREAKS = "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile(f"[{LINE_BREAKS}]")


def ascii_slug(text: str, limit: int = 80, fallback: str = "export") -> str:
    """A name for a file or a folder made from a person's text: lower-case ASCII letters and
    digits joined by dashes (accents dropped, anything else a dash), at most `limit` long, never
    empty; every store's key rule accepts it."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]+", "-", ascii_text).strip("-").lower()[:limit].rstrip("-") or fallback


def refuse_line_breaks(text: str, field: str, label: str) -> None:
    """ValidationError when `text`, a single-line field's value, holds a line break.

    The one rule for every single-line field (names, titles, subjects, labels); `label` names the
    field inside a sentence ("the name").
    """
    if _LINE_BREAK.search(text):
        raise ValidationError(f"{label[:1].upper()}{label[1:]} must be a single line. Remove the line break.", field)


def has_unstorable_character(text: str) -> bool:
    return _UNSTORABLE.search(text) is not None


def refuse_unstorable(value: object, field: str, label: str) -> None:
    """ValidationError when `value` (a text, or lists and mappings of texts) holds a character text columns refuse.

    `label` names the field for the person inside a sentence ("the name", "filter 2").
    """
    if any(has_unstorable_character(text) for text in _texts(value)):
        raise ValidationError(
            f"There is a character that cannot be saved (a NUL or another invalid character) in {label}. "
            "Remove it and try again.",
            field,
        )


@dataclass(frozen=True)
class TextField:
    """One text field declared once: what the form names it, how a sentence names it, its limit
    in characters, and whether it is one line and must be given. Its `check` is the field's rule
    wherever the value comes from (a form, an import); the form's validators and the page's
    `maxlength` read `limit` from here."""

    name: str
    label: str
    limit: int
    single_line: bool = True
    # The sentence when the field is left empty; None when it may be.
    missing: str | None = None

    def check(self, value: object) -> str:
        """The value without its surrounding spaces; ValidationError on the field otherwise.

        A character the database cannot hold and a line break in a one-line field are refused
        where they stand, before any trimming: a leading line break is not quietly removed."""
        if not isinstance(value, str):
            # Only an import sends anything but text: nothing for an optional field is empty.
            if value is None and self.missing is None:
                return ""
            raise ValidationError(self.missing or f"{self._sentence_label} must be text.", self.name)
        refuse_unstorable(value, self.name, self.label)
        if self.single_line:
            refuse_line_breaks(value, self.name, self.label)
        text = value.strip()
        if not text and self.missing is not None:
            raise ValidationError(self.missing, self.name)
        if len(text) > self.limit:
            raise ValidationError(self.too_long, self.name)
        return text

    @property
    def title(self) -> str:
        """The label as the page's field title: "the custom message" is "Custom message"."""
        return self._sentence_label.removeprefix("The ").capitalize()

    @property
    def too_long(self) -> str:
        return f"{self._sentence_label} is at most {self.limit:,} characters."

    @property
    def _sentence_label(self) -> str:
        return f"{self.label[:1].upper()}{self.label[1:]}"


def whole_number(
    text: object, field: str, message: str, minimum: int, maximum: int, range_message: str | None = None
) -> int:
    """`text` as an integer between `minimum` and `maximum`, written in ASCII digits.

    ValidationError(message) when it is not such a number, or (range_message or message) when it
    is out of range; a number too long for any range never reaches int().
    """
    candidate = str(text).strip() if text is not None else ""
    if not _WHOLE_NUMBER.fullmatch(candidate):
        raise ValidationError(message, field)
    if len(candidate.lstrip("+-").lstrip("0")) > _MAX_DIGITS or not minimum <= int(candidate) <= maximum:
        raise ValidationError(range_message or message, field)
    return int(candidate)


def database_id(value: object) -> int | None:
    """The id `value` names, or None when it is not a positive integer the database's id column can hold."""
    if isinstance(value, int):
        return value if 1 <= value <= DATABASE_INTEGER_MAX else None
    try:
        return whole_number(value, "id", "not an id", 1, DATABASE_INTEGER_MAX)
    except ValidationError:
        return None


def opened_version(text: str) -> int | None:
    """The version a form says it was opened at; None when it says none (a new record).

    A version that is not a whole number the database could hold was not written by the page.
    """
    if not text:
        return None
    return saved_version(text)


def saved_version(text: str) -> int:
    """The version the form of a saved record was opened at: its page always writes one, so a
    form without one was damaged like a form with one that is not a whole number."""
    version = database_id(text)
    if version is None:
        raise ValidationError(
            "The form was damaged on its way here. Reload the page and make the change again.", "version"
        )
    return version


def _texts(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _texts(key)
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)


# A request form's one-time token: what secrets.token_urlsafe writes, long enough not to be guessed.
_REQUEST_TOKEN = re.compile(r"[A-Za-z0-9_-]{22,64}")


def new_request_token() -> str:
    """A fresh one-time token for a request form, so the file it asks for is made once however often it is sent."""
    return secrets.token_urlsafe(24)


def request_key(text: str | None, choices: Mapping[str, object]) -> str | None:
    """The key a file is admitted under: the request form's one-time token with the choices it was
    sent with; None when the form carries no token (a page from before tokens).

    One rendered form sent again with the same choices (a double click, a repeated POST, the form
    the browser restores on Back) has the same key, and answers the file it made. The same form
    sent with a choice changed is another request: another key, another file. A token that is
    present but not one new_request_token could have written was not written by the page.
    """
    if not text:
        return None
    if not _REQUEST_TOKEN.fullmatch(text):
        raise ValidationError(
            "The form was damaged on its way here, so no file was requested. Reload the page and ask again.",
            "request_token",
        )
    sent = json.dumps([text, sorted(choices.items())], separators=(",", ":"))
    return base64.urlsafe_b64encode(hashlib.sha256(sent.encode()).digest()).decode("ascii").rstrip("=")
