"""When a schedule runs: timetables, their validation, and the instants they fire at.

A timetable names wall-clock times in an IANA time zone: every hour at minute M, every day at a
time, on chosen weekdays at a time, on a day of the month (1–28 or the last day) at a time, or a
five-field cron expression. Every kind is reduced to a cron expression that cronsim matches
against naive wall-clock times; turning those wall-clock times into UTC instants is done here,
so that the daylight-saving rules are this module's own and stated once:

- A wall-clock time that happens once is its instant.
- A wall-clock time that does not exist (the clock jumped over it) runs at the first valid
  local time after the gap (02:30 in New York on a spring-forward day runs at 03:00 EDT), for
  timetables that run at chosen hours. A timetable that runs every hour skips it when the clock
  jumped a whole hour or more: the clock never shows it, and the real hour still gets its run at
  minute M on the other side. Over a shorter jump (Lord Howe Island's half hour) skipping would
  leave a real hour without a run, so it runs at the end of the gap too.
- A wall-clock time that happens twice (the clock went back) runs at the first of the two for
  timetables at chosen hours; a timetable that runs every hour runs at both, because each is a
  real hour (on Lord Howe Island they are half an hour apart).
- The once-an-hour floor judges the timetable as written: only a minute field that resolves to
  one minute is accepted, so the wall-clock times named are at least an hour apart. A clock
  change never removes a run, even when it brings two closer (`30 1,2 * * *` in New York runs
  at 01:30 EST and, its 02:30 moved by the gap, at 03:00 EDT half an hour later). Only two
  wall-clock times that land on the same instant (`0 2,3 * * *` on a spring-forward night, both
  at 03:00) run once, since an instant is one run.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from enum import StrEnum
from functools import cache
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

from app.domain.errors import FieldChecks, ValidationError
from app.domain.values.text_rules import whole_number
from app.domain.values.time_zones import valid_zone


class TimetableKind(StrEnum):
    """How often a timetable names a time; the "kind" of its JSON and the schedule form's frequency."""

    HOURLY = "hourly"
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    CRON = "cron"


LAST_DAY = "last"
MAX_MONTH_DAY = 28
MAX_EXPRESSION_LENGTH = 200
WEEKDAY_KEYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# Indexed by month number; February's 29th comes in leap years.
_LONGEST_MONTH_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
MONTH_ABBREVIATIONS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
ONE_HOUR = timedelta(hours=1)
# Wider than any UTC offset a zone has had since clocks were standardised (−12:00 … +14:00, and
# the local mean times before that), so a wall-clock time's instants always lie within it.
_OFFSET_BOUND = timedelta(hours=26)
_TIME = re.compile(r"([01]?[0-9]|2[0-3]):([0-5][0-9])(?::00)?")
_CRON_FIELDS = ("minute", "hour", "day of month", "month", "day of week")
_MINUTES_IN_AN_HOUR = 60
_CRONSIM_FIELDS = {"Bad minute": 0, "Bad hour": 1, "Bad day-of-month": 2, "Bad month": 3, "Bad day-of-week": 4}


@dataclass(frozen=True)
class Timetable:
    """One schedule's timetable. Build it with `from_json`, which validates every field."""

    kind: str
    zone: str
    minute: int | None = None
    at: time | None = None
    weekdays: tuple[int, ...] = ()
    month_day: int | str | None = None
    expression: str | None = None

    @classmethod
    def from_json(cls, data: object, default_zone: str) -> Timetable:
        """A validated timetable from its JSON (or form) shape; ValidationError names the bad field.

        Shapes: {"kind": "hourly", "minute": 15}, {"kind": "daily", "time": "07:30"},
        {"kind": "weekly", "days": ["mon", "thu"], "time": "07:30"},
        {"kind": "monthly", "day": 1 | "last", "time": "07:30"},
        {"kind": "cron", "expression": "30 7 * * 1-5"}; each with an optional "zone"
        (`default_zone`, the workspace's, when it is missing or empty). Fields another kind
        uses are ignored, so a form may send them all.
        """
        if not isinstance(data, dict):
            raise ValidationError("Choose how often the schedule runs.", "kind")
        kind = data.get("kind")
        if kind not in tuple(TimetableKind):
            raise ValidationError("Choose how often the schedule runs: hourly, daily, weekly, monthly or cron.", "kind")
        # Every field is checked before any refusal is raised, so a form shows all its mistakes at once.
        checks = FieldChecks()
        zone_text = data.get("zone")
        zone = checks.check(valid_zone, zone_text if zone_text not in (None, "") else default_zone, "zone")
        fields: dict[str, Any] = {}
        if kind == TimetableKind.HOURLY:
            fields["minute"] = checks.check(_valid_minute, data.get("minute"))
        elif kind == TimetableKind.CRON:
            fields["expression"] = checks.check(_valid_expression, data.get("expression"))
        else:
            fields["at"] = checks.check(_valid_time, data.get("time"))
            if kind == TimetableKind.WEEKLY:
                fields["weekdays"] = checks.check(_valid_weekdays, data.get("days"))
            elif kind == TimetableKind.MONTHLY:
                fields["month_day"] = checks.check(_valid_month_day, data.get("day"))
        checks.raise_any()
        return cls(kind, str(zone), **fields)

    def to_json(self) -> dict[str, object]:
        """The shape `from_json` reads, with only this kind's fields and the zone."""
        data: dict[str, object] = {"kind": self.kind}
        if self.kind == TimetableKind.HOURLY:
            data["minute"] = self.minute
        elif self.kind == TimetableKind.CRON:
            data["expression"] = self.expression
        else:
            data["time"] = self.time_of_day.strftime("%H:%M")
            if self.kind == TimetableKind.WEEKLY:
                data["days"] = [WEEKDAY_KEYS[day - 1] for day in self.weekdays]
            elif self.kind == TimetableKind.MONTHLY:
                data["day"] = self.month_day
        data["zone"] = self.zone
        return data

    def describe(self) -> str:
        """A sentence for people: "Every Monday and Thursday at 07:30 (Europe/London)"."""
        zone = f"({self.zone})"
        if self.kind == TimetableKind.HOURLY:
            if self.minute == 0:
                return f"Every hour on the hour {zone}"
            unit = "minute" if self.minute == 1 else "minutes"
            return f"Every hour at {self.minute} {unit} past the hour {zone}"
        if self.kind == TimetableKind.CRON:
            return f"{_cron(self.expression).explain()} (cron “{self.expression}”, {self.zone})"
        at = self.time_of_day.strftime("%H:%M")
        if self.kind == TimetableKind.DAILY or len(self.weekdays) == len(WEEKDAY_KEYS):
            return f"Every day at {at} {zone}"
        if self.kind == TimetableKind.WEEKLY:
            if self.weekdays == (1, 2, 3, 4, 5):
                return f"Every weekday (Monday to Friday) at {at} {zone}"
            return f"Every {_spoken_list([WEEKDAY_NAMES[day - 1] for day in self.weekdays])} at {at} {zone}"
        if self.month_day == LAST_DAY:
            return f"On the last day of every month at {at} {zone}"
        return f"On the {_ordinal(self._numbered_day)} of every month at {at} {zone}"

    @property
    def time_of_day(self) -> time:
        """The wall-clock time a daily, weekly or monthly timetable runs at."""
        if self.at is None:
            raise ValueError(f"a {self.kind} timetable has no time of day")
        return self.at

    @property
    def _cron_text(self) -> str:
        if self.expression is None:
            raise ValueError(f"a {self.kind} timetable has no cron expression")
        return self.expression

    @property
    def _numbered_day(self) -> int:
        """The day of the month of a monthly timetable that does not run on the last day."""
        if not isinstance(self.month_day, int):
            raise ValueError(f"a {self.kind} timetable on day {self.month_day!r} has no numbered day")
        return self.month_day

    @property
    def cron_expression(self) -> str:
        """The wall-clock times this timetable names, as a five-field cron expression."""
        if self.kind == TimetableKind.CRON:
            return self._cron_text
        if self.kind == TimetableKind.HOURLY:
            return f"{self.minute} * * * *"
        head = f"{self.time_of_day.minute} {self.time_of_day.hour}"
        if self.kind == TimetableKind.DAILY:
            return f"{head} * * *"
        if self.kind == TimetableKind.WEEKLY:
            return f"{head} * * {','.join(str(day % 7) for day in self.weekdays)}"
        return f"{head} {'L' if self.month_day == LAST_DAY else self.month_day} * *"

    @property
    def runs_every_hour(self) -> bool:
        """True when every hour of a matching day is named: then each real hour gets its run."""
        return _cron(self.cron_expression).hours == set(range(24))


class Due(NamedTuple):
    """What the ticker runs now: the latest occurrence due, and the earlier ones it coalesces."""

    latest: datetime | None
    skipped: list[datetime]


@dataclass(frozen=True)
class OccurrenceInZones:
    """One occurrence as the schedule's zone and the viewer's show it."""

    instant: datetime
    schedule_local: datetime
    viewer_local: datetime

    @property
    def schedule_label(self) -> str:
        return wall_clock_label(self.schedule_local)

    @property
    def viewer_label(self) -> str:
        return wall_clock_label(self.viewer_local)


def next_occurrences(timetable: Timetable, after: datetime, count: int) -> list[datetime]:
    """The first `count` instants (aware, UTC) the timetable fires at strictly after `after`."""
    found: list[datetime] = []
    if count <= 0:
        return found
    for instant in _occurrences(timetable, _as_utc(after)):
        found.append(instant)
        if len(found) == count:
            break
    return found


def next_occurrence(timetable: Timetable, after: datetime) -> datetime | None:
    """The first instant (aware, UTC) strictly after `after`; None only for a cron that never fires again."""
    found = next_occurrences(timetable, after, 1)
    return found[0] if found else None


def due_occurrences(timetable: Timetable, last_occurrence: datetime, now: datetime) -> Due:
    """The occurrences after `last_occurrence` up to and including `now`, coalesced into one run.

    `last_occurrence` is the occurrence last run (or the moment the schedule was created or
    resumed, so a paused schedule does not catch up). After downtime only the latest due
    occurrence runs; the earlier ones are returned as skipped, oldest first, to be recorded.
    """
    limit = _as_utc(now)
    due: list[datetime] = []
    for instant in _occurrences(timetable, _as_utc(last_occurrence)):
        if instant > limit:
            break
        due.append(instant)
    if not due:
        return Due(None, [])
    return Due(due[-1], due[:-1])


def viewer_times(occurrences: Iterable[datetime], schedule_zone: str, viewer_zone: str) -> list[OccurrenceInZones]:
    """Each occurrence in the schedule's zone and the viewer's; ValidationError for a bad viewer zone."""
    schedule = ZoneInfo(valid_zone(schedule_zone, "zone"))
    viewer = ZoneInfo(valid_zone(viewer_zone, "viewer_zone"))
    return [
        OccurrenceInZones(_as_utc(instant), instant.astimezone(schedule), instant.astimezone(viewer))
        for instant in occurrences
    ]


def wall_clock_label(local: datetime) -> str:
    """ "Sun 29 Mar 2026, 03:00 BST (UTC+01:00)": the offset is always shown, the abbreviation when the zone has one."""
    day = f"{WEEKDAY_NAMES[local.weekday()][:3]} {local.day} {MONTH_ABBREVIATIONS[local.month - 1]} {local.year}"
    offset = local.strftime("%z")
    offset_text = f"UTC{offset[0]}{offset[1:3]}:{offset[3:5]}"
    abbreviation = local.tzname() or ""
    named = f"{abbreviation} " if abbreviation and abbreviation[0] not in "+-" else ""
    return f"{day}, {local:%H:%M} {named}({offset_text})"


def moment_label(local: datetime) -> str:
    """ "2 Dec 2026 09:00:05 GMT": a moment to the second, for run histories, whose page names its
    zone once; the abbreviation when the zone has one."""
    abbreviation = local.tzname() or ""
    named = f" {abbreviation}" if abbreviation and abbreviation[0] not in "+-" else ""
    return f"{local.day} {MONTH_ABBREVIATIONS[local.month - 1]} {local.year} {local:%H:%M:%S}{named}"


# Validation


def _valid_minute(value: object) -> int:
    return whole_number(
        value,
        "minute",
        "Enter the minute past the hour as a whole number from 0 to 59.",
        0,
        59,
        range_message="The minute past the hour must be from 0 to 59.",
    )


def _valid_time(value: object) -> time:
    text = value.strip() if isinstance(value, str) else ""
    matched = _TIME.fullmatch(text)
    if not matched:
        raise ValidationError("Enter the time as hours and minutes on the 24-hour clock, such as 07:30.", "time")
    return time(int(matched[1]), int(matched[2]))


def _valid_weekdays(value: object) -> tuple[int, ...]:
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple) or not value:
        raise ValidationError("Choose at least one day of the week.", "days")
    chosen = set()
    for entry in value:
        key = entry.strip().casefold() if isinstance(entry, str) else None
        if key not in WEEKDAY_KEYS:
            raise ValidationError("Choose days of the week from Monday to Sunday.", "days")
        chosen.add(WEEKDAY_KEYS.index(key) + 1)
    return tuple(sorted(chosen))


def _valid_month_day(value: object) -> int | str:
    if isinstance(value, str) and value.strip().casefold() == LAST_DAY:
        return LAST_DAY
    return whole_number(
        value,
        "day",
        f"Choose a day of the month from 1 to {MAX_MONTH_DAY}, or the last day.",
        1,
        MAX_MONTH_DAY,
        range_message=(
            f"A monthly schedule runs on a day from 1 to {MAX_MONTH_DAY}, which every month has; "
            "for the end of the month choose the last day."
        ),
    )


def _valid_expression(value: object) -> str:
    text = " ".join(value.split()) if isinstance(value, str) else ""
    if not text:
        raise ValidationError("Enter a cron expression, such as 30 7 * * 1-5.", "expression")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ValidationError(f"A cron expression is at most {MAX_EXPRESSION_LENGTH} characters.", "expression")
    if len(text.split(" ")) != len(_CRON_FIELDS):
        raise ValidationError(
            "A cron expression has five fields separated by spaces: minute, hour, day of month, month and day of week.",
            "expression",
        )
    try:
        parsed = _cron(text)
    except CronSimError as refused:
        _refuse_a_day_no_chosen_month_has(text)
        position = _CRONSIM_FIELDS.get(str(refused))
        if position is None:
            raise ValidationError("That cron expression is not valid.", "expression") from None
        field_text = text.split(" ")[position]
        raise ValidationError(
            f"The {_CRON_FIELDS[position]} field of the cron expression (“{field_text}”) is not valid.", "expression"
        ) from None
    if len(parsed.minutes) != 1:
        minutes = sorted(parsed.minutes)
        if len(minutes) == _MINUTES_IN_AN_HOUR:
            runs = "every minute"
        else:
            runs = (
                "at minutes " + ", ".join(str(minute) for minute in minutes[:4]) + (", …" if len(minutes) > 4 else "")
            )
            runs += " of every hour"
        raise ValidationError(
            f"That cron expression runs {runs}: more often than hourly. A schedule runs at most once an hour, "
            "so the minute field must name exactly one minute, such as 0.",
            "expression",
        )
    try:
        next(CronSim(text, datetime(2000, 1, 1)))
    except StopIteration:
        raise ValidationError("That cron expression names a date that never occurs.", "expression") from None
    return text


def _refuse_a_day_no_chosen_month_has(text: str) -> None:
    """The sentence for a valid day in months too short for it (`0 9 31 4 *`: April has no 31st)."""
    minute, hour, day, month, weekday = text.split(" ")
    try:
        days = _cron(f"{minute} {hour} {day} * {weekday}").days
        months = _cron(f"{minute} {hour} * {month} {weekday}").months
    except CronSimError:
        return
    if not days or not months or min(days) <= min(_LONGEST_MONTH_DAYS[number] for number in months):
        return
    names = _spoken_list([MONTH_NAMES[number - 1] for number in sorted(months)])
    verb = "has" if len(months) == 1 else "have"
    raise ValidationError(
        f"That cron expression names a date that never occurs: {names} {verb} no {_ordinal(min(days))} day.",
        "expression",
    )


@cache
def _cron(expression: str) -> CronSim:
    """The parsed expression; used for its fields and explain(), never iterated (it is shared)."""
    return CronSim(expression, datetime(2000, 1, 1))


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _spoken_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# Occurrences


def _as_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("Timetable instants are aware datetimes (UTC); a naive datetime has no instant.")
    return moment.astimezone(UTC)


def _occurrences(timetable: Timetable, after: datetime) -> Iterator[datetime]:
    """The instants the timetable fires at strictly after `after`, each once."""
    previous: datetime | None = None
    for instant in _candidate_instants(timetable, after):
        if instant > after and instant != previous:
            yield instant
        previous = instant


def _candidate_instants(timetable: Timetable, start: datetime) -> Iterator[datetime]:
    """Every instant at or after `start` that a matching wall-clock time maps to, ascending.

    An instant comes twice when a skipped time moves onto one that exists (02:00 and 03:00 on a
    spring-forward night); `_occurrences` runs it once.

    Wall-clock times come in order but their instants need not (two hours repeated when a clock
    goes back two hours), so they wait in a heap until no later wall-clock time can precede them.
    """
    zone = ZoneInfo(timetable.zone)
    every_hour = timetable.runs_every_hour
    naive_start = start.replace(tzinfo=None)
    waiting: list[datetime] = []
    for wall in CronSim(timetable.cron_expression, naive_start - _OFFSET_BOUND):
        for instant in _instants_of(wall, zone, every_hour):
            heapq.heappush(waiting, instant)
        settled = wall.replace(tzinfo=UTC) - _OFFSET_BOUND
        while waiting and waiting[0] <= settled:
            instant = heapq.heappop(waiting)
            if instant >= start:
                yield instant
    while waiting:
        instant = heapq.heappop(waiting)
        if instant >= start:
            yield instant


def _instants_of(wall: datetime, zone: ZoneInfo, every_hour: bool) -> list[datetime]:
    """The instants a wall-clock time runs at in `zone`, by the daylight-saving rules above."""
    first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    second = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    if first == second:
        return [first]
    if first.astimezone(zone).replace(tzinfo=None) == wall:
        return [first, second] if every_hour else [first]
    earlier, later = min(first, second), max(first, second)
    if every_hour and later - earlier >= ONE_HOUR:
        return []
    return [_end_of_gap(wall, zone, earlier, later)]


def _end_of_gap(wall: datetime, zone: ZoneInfo, before: datetime, after: datetime) -> datetime:
    """The instant the clock jumped over `wall`: the first valid local time after the gap.

    `before` shows a local time before the gap and `after` one after it; bisect to the second.
    """
    low, high = before, after
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) // 2
        middle = middle.replace(microsecond=0)
        if middle.astimezone(zone).replace(tzinfo=None) > wall:
            high = middle
        else:
            low = middle
    return high
