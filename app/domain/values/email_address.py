"""The one rule for an email address a schedule sends to: the schedule form, the legacy import
and the mailer all ask `check_address`, so whatever the form accepts the mailer can send.

- The local part is a dot-atom of ASCII characters: a non-ASCII local part needs SMTPUTF8 from
  every server on the way, which this product does not assume.
- The domain is a host name with at least one dot. An internationalised domain is accepted as
  IDNA 2008 (UTS #46 mapping, as browsers and mail clients apply it) accepts it, and the message
  is addressed to its ASCII form (`xn--…`); the address is kept as typed for people to read.
- A domain label mixing writing systems (a Cyrillic “р” among Latin letters, as in
  `examрle.com`, or its `xn--` form typed directly) is refused with a sentence saying so: it
  imitates another domain. Digits and hyphens belong to every script; Japanese (Han with kana)
  and Korean (Hangul with Han) labels count as one script each.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import idna

from app.domain.errors import ValidationError
from app.domain.values.text_rules import has_unstorable_character

MAX_ADDRESS_LENGTH = 254
# What people put between addresses on one line, as a mail client's "To" field takes them.
_LIST_SEPARATORS = re.compile(r"[,;]")
ONE_A_LINE = (
    "This field takes one address per line: put each address on a line of its own, without commas between them."
)

_LOCAL_PART = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_ASCII_DOMAIN = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})+")
# Scripts that one language writes together in one word: Japanese mixes Han and both kana,
# Korean Hangul and Han.
_WRITTEN_TOGETHER = (
    frozenset({"CJK", "HIRAGANA", "KATAKANA"}),
    frozenset({"HANGUL", "CJK"}),
)


@dataclass(frozen=True)
class EmailAddress:
    """An address that passed the rule: `typed` as the person wrote it (trimmed, NFC), and
    `ascii`, the same address with its domain in IDNA's ASCII form, as written into a message."""

    typed: str
    ascii: str


def _script(character: str) -> str | None:
    """The writing system of a letter, by the first word of its Unicode name; None for a digit,
    a hyphen or a mark, which every script shares."""
    if not unicodedata.category(character).startswith("L"):
        return None
    name = unicodedata.name(character, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


def _mixes_scripts(label: str) -> bool:
    scripts = {script for script in map(_script, label) if script is not None}
    if len(scripts) <= 1:
        return False
    return not any(scripts <= together for together in _WRITTEN_TOGETHER)


def check_address(value: object, field: str = "email") -> EmailAddress:
    """The address, or ValidationError(field) with a sentence saying what is wrong with it."""
    text = unicodedata.normalize("NFC", value.strip()) if isinstance(value, str) else ""
    shown = text if len(text) <= 80 else f"{text[:80]}…"
    if has_unstorable_character(text):
        raise ValidationError(
            "There is a character that cannot be saved (a NUL or another invalid character) in an address. "
            "Remove it and try again.",
            field,
        )
    local, at, domain = text.rpartition("@")
    if not at or not local or not domain or len(text) > MAX_ADDRESS_LENGTH:
        raise ValidationError(f"“{shown}” is not an email address.", field)
    if not local.isascii():
        raise ValidationError(
            f"“{shown}” cannot be sent to: the part before the @ must be in plain Latin letters, digits "
            "and punctuation.",
            field,
        )
    if not _LOCAL_PART.fullmatch(local):
        raise ValidationError(f"“{shown}” is not an email address.", field)
    ascii_domain = _international_domain(domain, shown, field) if _is_international(domain) else domain
    if not _ASCII_DOMAIN.fullmatch(ascii_domain):
        raise ValidationError(f"“{shown}” is not an email address.", field)
    return EmailAddress(text, f"{local}@{ascii_domain}")


def addresses_one_a_line(text: str, field: str) -> list[EmailAddress]:
    """The addresses typed one a line (blank lines skipped), each through `check_address`.

    One ValidationError(field) names every line that is not an address, not only the first; a
    line holding several addresses separated by commas or semicolons is answered with how the
    field is read (ONE_A_LINE) instead of a refusal of each address.
    """
    addresses: list[EmailAddress] = []
    refusals: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if sum("@" in part for part in _LIST_SEPARATORS.split(line)) > 1:
            raise ValidationError(ONE_A_LINE, field)
        try:
            addresses.append(check_address(line, field))
        except ValidationError as refused:
            refusals.append(str(refused))
    if len(refusals) > 1:
        raise ValidationError(f"{len(refusals)} addresses need a change. " + " ".join(refusals), field)
    if refusals:
        raise ValidationError(refusals[0], field)
    return addresses


def _is_international(domain: str) -> bool:
    return not domain.isascii() or any(label.lower().startswith("xn--") for label in domain.split("."))


def _international_domain(domain: str, shown: str, field: str) -> str:
    """The domain's ASCII form, after every label is checked for mixed writing systems."""
    try:
        unicode_domain = idna.decode(domain, uts46=True)
    except (idna.IDNAError, UnicodeError):
        raise ValidationError(f"“{shown}” does not have a valid international domain name.", field) from None
    for label in unicode_domain.split("."):
        if _mixes_scripts(label):
            raise ValidationError(
                f"“{shown}” mixes writing systems in its domain (“{label}”), as addresses imitating another "
                "domain do. Check the address and type it again.",
                field,
            )
    try:
        return idna.encode(domain, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        raise ValidationError(f"“{shown}” does not have a valid international domain name.", field) from None
