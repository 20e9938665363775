"""What workspace export settings must be before they are stored.

Pure checks of what a form sent: each refusal is a ValidationError naming the form field, with a
sentence for the person. What needs the database (who is a member) is looked up by the services
and passed in. A destination's rules are app/domain/destinations/destination_input.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.errors import ValidationError
from app.domain.timing.timetable import WEEKDAY_NAMES
from app.domain.values.text_rules import refuse_unstorable, whole_number
from app.domain.workspace_export.coverage import DECLARATIONS, CoverageStatus
from app.domain.workspace_export.export_cadence import cadence_timetable
from app.models.export_settings import (
    MAX_NOTIFY_PEOPLE,
    RETENTION_DAYS,
    VOLUME_SIZE_MB,
    Cadence,
    PackageFormat,
    SettingsStatus,
)

# What an administrator may choose; "suspended" is set by staff only.
CHOOSABLE_STATUSES = (SettingsStatus.ACTIVE, SettingsStatus.PAUSED)


def active_datasets() -> tuple[str, ...]:
    """The datasets a package may include now, in the registry's order."""
    return tuple(d.dataset for d in DECLARATIONS if d.status == CoverageStatus.ACTIVE)


# Settings


@dataclass(frozen=True)
class SettingsInput:
    """The settings form as it was posted: texts and lists of texts."""

    datasets: list[str]
    format: str
    volume_size_mb: str
    retention_days: str
    cadence: str
    cadence_time: str
    cadence_weekday: str
    cadence_day: str
    notify_person_ids: list[str]
    status: str


@dataclass(frozen=True)
class CheckedSettings:
    datasets: list[str]
    format: str
    volume_size_mb: int
    retention_days: int
    cadence: str
    cadence_time: str
    cadence_weekday: int | None
    cadence_day: int | None
    notify_person_ids: list[int]
    status: str


def check_settings(data: SettingsInput, member_ids: frozenset[int], zone: str) -> CheckedSettings:
    """The settings as they will be stored; ValidationError names the first bad field.

    `member_ids` are the workspace's current members (the people who may be notified); `zone`
    is the workspace's time zone, the cadence's clock.
    """
    refuse_unstorable(
        [
            data.datasets,
            data.format,
            data.volume_size_mb,
            data.retention_days,
            data.cadence,
            data.cadence_time,
            data.cadence_weekday,
            data.cadence_day,
            data.notify_person_ids,
            data.status,
        ],
        "form",
        "the form",
    )
    datasets = _checked_datasets(data.datasets)
    if data.format not in tuple(PackageFormat):
        raise ValidationError("Choose the package format: CSV, JSON Lines or Parquet.", "format")
    volume_size_mb = whole_number(
        data.volume_size_mb,
        "volume_size_mb",
        f"Enter the volume size in MB as a whole number from {VOLUME_SIZE_MB[0]} to {VOLUME_SIZE_MB[1]}.",
        *VOLUME_SIZE_MB,
    )
    retention_days = whole_number(
        data.retention_days,
        "retention_days",
        f"Enter how many days packages are kept, a whole number from {RETENTION_DAYS[0]} to {RETENTION_DAYS[1]}.",
        *RETENTION_DAYS,
    )
    cadence, cadence_time, weekday, day = _checked_cadence(data, zone)
    if data.status not in CHOOSABLE_STATUSES:
        raise ValidationError("Choose whether the cadence is active or paused.", "status")
    return CheckedSettings(
        datasets=datasets,
        format=data.format,
        volume_size_mb=volume_size_mb,
        retention_days=retention_days,
        cadence=cadence,
        cadence_time=cadence_time,
        cadence_weekday=weekday,
        cadence_day=day,
        notify_person_ids=_checked_people(data.notify_person_ids, member_ids),
        status=data.status,
    )


def _checked_datasets(names: list[str]) -> list[str]:
    chosen = {name.strip() if isinstance(name, str) else "" for name in names}
    available = active_datasets()
    unknown = sorted(chosen - set(available))
    if unknown:
        shown = unknown[0] if len(unknown[0]) <= 60 else unknown[0][:60] + "…"
        raise ValidationError(f"“{shown}” is not a dataset a package can include; choose from the list.", "datasets")
    if not chosen:
        raise ValidationError("Choose at least one dataset for the packages.", "datasets")
    return [name for name in available if name in chosen]


def _checked_cadence(data: SettingsInput, zone: str) -> tuple[str, str, int | None, int | None]:
    if data.cadence not in tuple(Cadence):
        raise ValidationError("Choose the cadence: off, daily, weekly or monthly.", "cadence")
    weekday = None
    day = None
    if data.cadence == Cadence.WEEKLY:
        weekday = whole_number(data.cadence_weekday, "cadence_weekday", "Choose the day of the week.", 0, 6)
    if data.cadence == Cadence.MONTHLY:
        day = whole_number(
            data.cadence_day,
            "cadence_day",
            "Choose the day of the month, a whole number from 1 to 28 (which every month has).",
            1,
            28,
        )
    at = (data.cadence_time or "").strip()
    timetable_fields: dict[str | None, str] = {
        "time": "cadence_time",
        "days": "cadence_weekday",
        "day": "cadence_day",
        "zone": "cadence",
    }
    try:
        timetable = cadence_timetable(
            data.cadence if data.cadence != Cadence.OFF else Cadence.DAILY, at, weekday, day, zone
        )
    except ValidationError as refused:
        raise ValidationError(str(refused), timetable_fields.get(refused.field, "cadence")) from None
    if timetable is None:
        raise ValueError("an off cadence is checked as a daily one, so it has a timetable")
    return data.cadence, timetable.time_of_day.strftime("%H:%M"), weekday, day


def _checked_people(values: list[str], member_ids: frozenset[int]) -> list[int]:
    chosen: list[int] = []
    for value in values:
        person_id = whole_number(value, "notify_person_ids", "Choose people to notify from the list.", 1, 2**31 - 1)
        if person_id not in member_ids:
            raise ValidationError(
                "Someone chosen to be notified is not a member of this workspace (any more); choose again.",
                "notify_person_ids",
            )
        if person_id not in chosen:
            chosen.append(person_id)
    if len(chosen) > MAX_NOTIFY_PEOPLE:
        raise ValidationError(f"Choose at most {MAX_NOTIFY_PEOPLE} people to notify.", "notify_person_ids")
    return chosen


def describe_cadence(cadence: str, at: str, weekday: int | None, day: int | None, zone: str) -> str:
    """ "Every Monday at 02:00 (Europe/London)", or "Off"."""
    if cadence == Cadence.DAILY:
        return f"Every day at {at} ({zone})"
    if cadence == Cadence.WEEKLY and weekday is not None:
        return f"Every {WEEKDAY_NAMES[weekday]} at {at} ({zone})"
    if cadence == Cadence.MONTHLY and day is not None:
        return f"On day {day} of every month at {at} ({zone})"
    return "Off: packages are made only with Export now"
