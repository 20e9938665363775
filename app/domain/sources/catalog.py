"""The catalog of product-wide datasets: what can be queried and exported, described for people.

Each dataset names its table, schema version, typed columns with a label and a description,
and the column that decides row scope (a membership's team scope hides other teams' rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Table

from app.models import Shift, Team, TeamMember, TimeOffRequest, TimesheetEntry

COLUMN_TYPES = ("text", "integer", "decimal", "date", "datetime", "boolean")


@dataclass(frozen=True)
class Column:
    name: str
    label: str
    type: str
    description: str


@dataclass(frozen=True)
class Dataset:
    name: str
    label: str
    description: str
    schema_version: int
    table: Table
    team_column: str
    columns: tuple[Column, ...]

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def known_column(self, name: str) -> Column:
        """The column called `name`, a name already checked against the dataset; KeyError otherwise."""
        column = self.column(name)
        if column is None:
            raise KeyError(f"the {self.name} dataset has no column {name!r}")
        return column

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


def _c(name: str, label: str, type_: str, description: str) -> Column:
    assert type_ in COLUMN_TYPES, type_
    return Column(name, label, type_, description)


DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            name="teams",
            label="Teams",
            description="Teams of the workspace and where they work.",
            schema_version=1,
            table=Team.__table__,
            team_column="id",
            columns=(
                _c("id", "Team ID", "integer", "Identifier of the team."),
                _c("code", "Code", "text", "Short code the team is known by."),
                _c("name", "Team", "text", "Name of the team."),
                _c("location", "Location", "text", "Site or city the team works from."),
                _c("created_at", "Created", "datetime", "When the team was created (UTC)."),
            ),
        ),
        Dataset(
            name="people",
            label="People",
            description="Employees scheduled in the workspace.",
            schema_version=1,
            table=TeamMember.__table__,
            team_column="team_id",
            columns=(
                _c("id", "Person ID", "integer", "Identifier of the employee."),
                _c("full_name", "Name", "text", "Full name as the employee gave it."),
                _c("email", "Email", "text", "Work email address."),
                _c("team_id", "Team ID", "integer", "Identifier of the employee's home team."),
                _c("team_name", "Team", "text", "Name of the employee's home team."),
                _c("job_title", "Job title", "text", "Role the employee is employed in."),
                _c("hourly_rate", "Hourly rate", "decimal", "Base pay per hour, in the workspace currency."),
                _c("started_on", "Start date", "date", "First day of employment."),
                _c("active", "Active", "boolean", "Whether the employee can be scheduled."),
            ),
        ),
        Dataset(
            name="shifts",
            label="Shifts",
            description="Scheduled shifts with their start, end and break.",
            schema_version=1,
            table=Shift.__table__,
            team_column="team_id",
            columns=(
                _c("id", "Shift ID", "integer", "Identifier of the shift."),
                _c("person_id", "Person ID", "integer", "Identifier of the employee on the shift."),
                _c("person_name", "Employee", "text", "Name of the employee on the shift."),
                _c("team_id", "Team ID", "integer", "Identifier of the team the shift belongs to."),
                _c("team_name", "Team", "text", "Team the shift belongs to."),
                _c("role", "Role", "text", "Position worked on the shift."),
                _c("starts_at", "Starts", "datetime", "Start of the shift (UTC)."),
                _c("ends_at", "Ends", "datetime", "End of the shift (UTC)."),
                _c("break_minutes", "Break (min)", "integer", "Unpaid break, in minutes."),
                _c("notes", "Notes", "text", "Free-text notes from the scheduler."),
            ),
        ),
        Dataset(
            name="time_off_requests",
            label="Time-off requests",
            description="Leave requested by employees and its approval status.",
            schema_version=1,
            table=TimeOffRequest.__table__,
            team_column="team_id",
            columns=(
                _c("id", "Request ID", "integer", "Identifier of the request."),
                _c("person_id", "Person ID", "integer", "Identifier of the employee asking."),
                _c("person_name", "Employee", "text", "Name of the employee asking."),
                _c("team_id", "Team ID", "integer", "Identifier of the employee's team."),
                _c("team_name", "Team", "text", "Employee's team."),
                _c("kind", "Kind", "text", "Kind of leave: annual, sick, parental or unpaid."),
                _c("status", "Status", "text", "pending, approved or declined."),
                _c("starts_on", "First day", "date", "First day of leave."),
                _c("ends_on", "Last day", "date", "Last day of leave."),
                _c("days", "Days", "decimal", "Working days of leave requested."),
                _c("reason", "Reason", "text", "Reason given by the employee."),
                _c("submitted_at", "Submitted", "datetime", "When the request was made (UTC)."),
            ),
        ),
        Dataset(
            name="timesheet_entries",
            label="Timesheet entries",
            description="Hours worked per employee, day and project.",
            schema_version=1,
            table=TimesheetEntry.__table__,
            team_column="team_id",
            columns=(
                _c("id", "Entry ID", "integer", "Identifier of the entry."),
                _c("person_id", "Person ID", "integer", "Identifier of the employee."),
                _c("person_name", "Employee", "text", "Name of the employee."),
                _c("team_id", "Team ID", "integer", "Identifier of the employee's team."),
                _c("team_name", "Team", "text", "Employee's team."),
                _c("work_date", "Date", "date", "Day the hours were worked."),
                _c("hours", "Hours", "decimal", "Hours worked, to the quarter hour."),
                _c("project", "Project", "text", "Project or cost centre the hours are booked to."),
                _c("approved", "Approved", "boolean", "Whether a manager approved the entry."),
                _c("note", "Note", "text", "Free-text note from the employee."),
                _c("recorded_at", "Recorded", "datetime", "When the entry was recorded (UTC)."),
            ),
        ),
    )
}


def get_dataset(name: str) -> Dataset | None:
    return DATASETS.get(name)


def dataset_label(name: str) -> str:
    """A dataset as people read it ("Time-off requests"); its key for one the catalog no longer has."""
    dataset = DATASETS.get(name)
    return dataset.label if dataset else name
