"""When a workspace export's cadence admits an execution, and which period each one is for.

A cadence is off, daily, weekly (a weekday, 0 = Monday) or monthly (a day from 1 to 28, which
every month has), at an "HH:MM" wall-clock time in an IANA time zone. The wall-clock times are
turned into UTC instants by the schedules' timetable (app/domain/timing/timetable.py), so workspace
exports follow the same daylight-saving rules as schedules, stated once there: a time the clock
skips runs at the first valid local time after the gap, a time the clock shows twice runs at the
first of the two.

`cadence_key` names the period an execution is for; the executions table holds one execution per
(workspace, key), so however many schedulers tick at once a period admits one execution.
"""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from app.domain.timing.timetable import WEEKDAY_KEYS, Timetable, next_occurrence
from app.models.export_settings import Cadence


def cadence_timetable(cadence: str, at: str, weekday: int | None, day: int | None, zone: str) -> Timetable | None:
    """The timetable a cadence fires on, or None when the cadence is off.

    ValidationError (from the timetable) names a bad time, weekday, day or zone.
    """
    if cadence == Cadence.OFF:
        return None
    shape: dict[str, object] = {"kind": str(cadence), "time": at, "zone": zone}
    if cadence == Cadence.WEEKLY:
        shape["days"] = [WEEKDAY_KEYS[weekday]] if weekday is not None and 0 <= weekday <= 6 else []
    elif cadence == Cadence.MONTHLY:
        shape["day"] = day
    elif cadence != Cadence.DAILY:
        raise ValueError(f"unknown cadence {cadence!r}")
    return Timetable.from_json(shape, zone)


def next_cadence_at(
    cadence: str, at: str, weekday: int | None, day: int | None, zone: str, after: datetime
) -> datetime | None:
    """The first cadence instant (aware, UTC) strictly after `after`; None when the cadence is off."""
    timetable = cadence_timetable(cadence, at, weekday, day, zone)
    return None if timetable is None else next_occurrence(timetable, after)


def cadence_key(cadence: str, local_date: date) -> str:
    """The period a cadence execution on `local_date` (in the cadence's zone) is for.

    "daily:2026-12-01", "weekly:2026-W49" (the ISO week, whose year may differ from the
    calendar year at the turn of the year), "monthly:2026-12".
    """
    if cadence == Cadence.DAILY:
        return f"daily:{local_date.isoformat()}"
    if cadence == Cadence.WEEKLY:
        iso = local_date.isocalendar()
        return f"weekly:{iso.year:04d}-W{iso.week:02d}"
    if cadence == Cadence.MONTHLY:
        return f"monthly:{local_date.year:04d}-{local_date.month:02d}"
    raise ValueError(f"a cadence of {cadence!r} has no periods")


def cadence_key_at(cadence: str, instant: datetime, zone: str) -> str:
    """The period of a cadence instant: `cadence_key` of its local date in `zone`."""
    return cadence_key(cadence, instant.astimezone(ZoneInfo(zone)).date())
