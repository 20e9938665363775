"""Time zones as people name them: the IANA database's names, checked as typed (a wrong case is
answered with the right spelling), and the ones a time-zone field suggests."""

from __future__ import annotations

from functools import cache
from zoneinfo import available_timezones

from app.domain.errors import ValidationError

MAX_ZONE_LENGTH = 64
# Areas of the IANA database that hold only aliases kept for old systems.
_LEGACY_ZONE_AREAS = frozenset({"Etc", "SystemV", "US", "Brazil", "Canada", "Chile", "Mexico"})


@cache
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones())


@cache
def zone_suggestions() -> tuple[str, ...]:
    """The zones a time-zone field suggests, in order: UTC and the Area/City names people know
    their clocks by, without the legacy aliases (GB-Eire, US/Pacific, Etc/GMT+5) that are still accepted."""
    areas = sorted(name for name in _zone_names() if "/" in name and name.split("/")[0] not in _LEGACY_ZONE_AREAS)
    return ("UTC", *areas)


def is_zone(text: str) -> bool:
    """True when `text` names a zone of the IANA database exactly (as the timetable stores it)."""
    return text in _zone_names()


@cache
def _zone_names_by_folded_case() -> dict[str, str]:
    return {name.casefold(): name for name in _zone_names()}


def valid_zone(value: object, field: str) -> str:
    """`value` as a zone of the IANA database; ValidationError on `field` saying what to write instead."""
    text = value.strip() if isinstance(value, str) else ""
    if text in _zone_names():
        return text
    if not text:
        raise ValidationError("Choose a time zone.", field)
    if len(text) > MAX_ZONE_LENGTH:
        raise ValidationError("That is not a time zone; use a name such as Europe/London.", field)
    suggestion = _zone_names_by_folded_case().get(text.casefold())
    hint = f"did you mean {suggestion}?" if suggestion else "use a name such as Europe/London or America/New_York."
    raise ValidationError(f"“{text}” is not a time zone of the IANA database; {hint}", field)
