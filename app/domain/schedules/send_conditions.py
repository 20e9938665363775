"""When a schedule's run sends its file: the one rule the run, the form and the preview use.

A run decides once its file is made and before any delivery row: send, or skip with its reason in
words. A skipped run made its file and sent nothing; it is not a failure (docs/schedules.md,
"When to send").
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.errors import ValidationError
from app.models.schedule import ScheduleKind, SendCondition

LABELS: dict[str, str] = {
    SendCondition.ALWAYS: "Always",
    SendCondition.HAS_ROWS: "Only when the file has rows",
    SendCondition.NO_ROWS: "Only when the file has no rows (an alert)",
    SendCondition.CHANGED: "Only when the rows changed since the last run that sent",
}

# What each choice means, in one sentence: beside the choice on the form, under the next five runs.
MEANINGS: dict[str, str] = {
    SendCondition.ALWAYS: "Every run sends the file to the recipients, whether it has rows or not.",
    SendCondition.HAS_ROWS: "A run sends the file only when it has at least one row; a run with none sends nothing.",
    SendCondition.NO_ROWS: (
        "A run sends an alert saying the file has no rows, without the empty file, only when it has none;"
        " a run with rows sends nothing."
    ),
    SendCondition.CHANGED: (
        "A run sends the file only when its rows differ, in any value, order or column, from those of the"
        " last run that sent; the first run always sends."
    ),
}

# The sentence of the alert an "only when none" run sends in place of the file.
NO_ROWS_ALERT = "The file has no rows this time, so it is neither attached nor linked."
NO_ROWS_ALERT_WITH_FILE = "The file has no rows this time; the empty file is linked as this schedule asks."


def from_send_when_empty(kind: str, send_when_empty: bool) -> SendCondition:
    """The choice that does what the old "send when empty" switch did: a query schedule without it
    sent nothing for a file with no rows; a report schedule was never held back."""
    return SendCondition.HAS_ROWS if kind == ScheduleKind.QUERY and not send_when_empty else SendCondition.ALWAYS


def checked(text: str) -> SendCondition:
    """The form's choice; ValidationError on the field for anything else."""
    if text not in LABELS:
        raise ValidationError("Choose when a run sends: " + "; ".join(LABELS.values()).lower() + ".", "send_condition")
    return SendCondition(text)


def label(condition: str) -> str:
    return LABELS.get(condition, condition)


def meaning(condition: str) -> str:
    return MEANINGS.get(condition, MEANINGS[SendCondition.ALWAYS])


@dataclass(frozen=True)
class LastSent:
    """The last run of the schedule that sent: its number in the run history and its rows' digest."""

    number: int
    rows_digest: str | None


def compares_with_last_sent(condition: str) -> bool:
    """Whether the condition's decision reads the last run that sent ("only when changed")."""
    return condition == SendCondition.CHANGED


def skip_reason(condition: str, row_count: int, rows_digest: str | None, last_sent: LastSent | None) -> str | None:
    """Why a run whose file has `row_count` rows (with `rows_digest`) sends nothing, in words; None
    when it sends. "Changed" sends when there is no earlier sending run, or its digest is unknown
    (it ran before digests were kept), or either digest is missing: sending is the safe mistake."""
    if condition == SendCondition.HAS_ROWS and row_count == 0:
        return "no rows"
    if condition == SendCondition.NO_ROWS and row_count > 0:
        return f"{row_count:,} row{'' if row_count == 1 else 's'}; it sends only when there are none"
    if not compares_with_last_sent(condition) or last_sent is None or rows_digest is None:
        return None
    return f"unchanged since run {last_sent.number}" if rows_digest == last_sent.rows_digest else None
