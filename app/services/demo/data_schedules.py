"""The demo workspace's message template and the administrator's four schedules, one per state a
newcomer meets (docs/schedules.md, "Demo data"), as data: an active daily query schedule to two
people and an outside address, a weekly report schedule, one paused by a legacy import, and one
whose last run failed after two attempts.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.services.demo.data_workspaces import ADMIN, MEMBER, SCOPED, Login

TEMPLATE_NAME = "Scheduled file"
# (subject, body): version 1 is published, version 2 a draft.
TEMPLATE_VERSIONS = (
    (
        "Your scheduled file from Northwind Care",
        "Hello,\n\nThe file below was produced on its schedule. The download link works for 30 days.\n\n"
        "Northwind Care workforce office",
    ),
    (
        "Your Northwind Care file is ready",
        "Hello,\n\nYour regular file is ready. Download it within 30 days; after that, ask the schedule's "
        "owner for a new one.\n\nNorthwind Care workforce office",
    ),
)

# Outside addresses (the administrator holds the external-recipients grant); contoso.example is
# a reserved domain, so nothing is ever delivered there.
_PAYROLL_ADDRESS = "payroll@contoso.example"
_HR_ARCHIVE_ADDRESS = "hr-archive@contoso.example"
_HR_RECORDS_ADDRESS = "hr-records@contoso.example"


@dataclass(frozen=True)
class FailedRun:
    """A last occurrence that failed: a transient failure, then a retry that failed for good.
    Recipients who unsubscribed before it are skipped; the others failed, having no file to link to."""

    # (error code, detail) of each attempt.
    transient: tuple[str, str]
    final: tuple[str, str]
    unsubscribed: tuple[str, ...]


@dataclass(frozen=True)
class ScheduleSeed:
    """A schedule of the administrator's, sending the saved query or the report (`kind`) named `source`."""

    name: str
    kind: str
    source: str
    timetable: dict
    # People by their sign-in, outside addresses as written.
    recipients: tuple[Login | str, ...]
    format: str
    heading: str
    custom_message: str
    # Imported from the old system under this reference: paused, without the template, with its audit event.
    legacy_ref: str | None = None
    last_run: FailedRun | None = None


_CORRECTED_SINCE = (
    "The report named a column its saved query no longer had; the report has been corrected since, "
    "and the next run uses it."
)

SCHEDULES = (
    ScheduleSeed(
        "Approved hours, every morning",
        "query",
        "Approved hours last 7 days",
        {"kind": "daily", "time": "07:00"},
        (MEMBER, SCOPED, _PAYROLL_ADDRESS),
        format="csv",
        heading="names",
        custom_message="Yesterday's approved hours are in the file; payroll closes on the 25th.",
    ),
    ScheduleSeed(
        "Hours by team, Monday PDF",
        "report",
        "Hours by team",
        {"kind": "weekly", "days": ["mon"], "time": "08:00"},
        (ADMIN, MEMBER),
        format="pdf",
        heading="labels",
        custom_message="The weekly hours by team, for the Monday huddle.",
    ),
    ScheduleSeed(
        "Pending time off (old system)",
        "query",
        "Pending time off",
        {"kind": "monthly", "day": 1, "time": "09:00"},
        (ADMIN, _HR_RECORDS_ADDRESS),
        format="xlsx",
        heading="names",
        custom_message="Pending requests, as the old scheduling system sent them on the 1st.",
        legacy_ref="LEGACY-0042",
    ),
    ScheduleSeed(
        "Team roster for HR, Fridays",
        "report",
        "Team roster",
        {"kind": "weekly", "days": ["fri"], "time": "16:00"},
        (MEMBER, _HR_ARCHIVE_ADDRESS),
        format="xlsx",
        heading="labels",
        custom_message="The roster as it stands at the end of the week.",
        last_run=FailedRun(
            transient=("storage_error", "The file store did not answer in time; retried."),
            final=("invalid_request", _CORRECTED_SINCE),
            unsubscribed=(_HR_ARCHIVE_ADDRESS,),
        ),
    ),
)
