"""The demo administrator's starter saved queries and sample reports (one of each kind), as data:
each as the query builder and the Reports form would post it; build_sources.py validates and
stores them exactly as those pages do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from app.services.demo.data_workspaces import NORTHWIND, TEST_RECORDS_NAME

# The test records' query and report were made this long before the starter ones, so a list in
# "recently changed" order shows them last.
TEST_RECORDS_AGE = timedelta(days=30)


@dataclass(frozen=True)
class QuerySeed:
    name: str
    # As the query builder posts it.
    definition: dict
    # How long ago it was made and last changed.
    age: timedelta = timedelta(0)


@dataclass(frozen=True)
class ReportSeed:
    # The saved query it presents, by name.
    query: str
    # As the Reports form posts it, with the report's name.
    definition: dict
    # How long ago it was made and last changed.
    age: timedelta = timedelta(0)


SAVED_QUERIES = (
    QuerySeed(
        "Approved hours last 7 days",
        {
            "dataset": "timesheet_entries",
            "columns": ["work_date", "person_name", "team_name", "project", "hours", "note"],
            "filters": [{"column": "approved", "op": "is_true"}],
            "sort": [{"column": "work_date", "direction": "desc"}, {"column": "person_name", "direction": "asc"}],
            "parameters": [{"column": "work_date", "range": "last_7_days"}],
        },
    ),
    QuerySeed(
        "Team roster",
        {
            "dataset": "people",
            "columns": ["team_name", "full_name", "job_title", "email", "started_on"],
            "filters": [{"column": "active", "op": "is_true"}],
            "sort": [{"column": "team_name", "direction": "asc"}, {"column": "full_name", "direction": "asc"}],
        },
    ),
    QuerySeed(
        "Pending time off",
        {
            "dataset": "time_off_requests",
            "columns": ["person_name", "team_name", "kind", "starts_on", "ends_on", "days", "reason", "submitted_at"],
            "filters": [{"column": "status", "op": "eq", "value": "pending"}],
            "sort": [{"column": "starts_on", "direction": "asc"}],
        },
    ),
    QuerySeed(
        "Shifts this week",
        {
            "dataset": "shifts",
            "columns": ["starts_at", "ends_at", "person_name", "team_name", "role", "break_minutes", "notes"],
            "sort": [{"column": "starts_at", "direction": "asc"}],
            "parameters": [{"column": "starts_at", "range": "this_week"}],
        },
    ),
    QuerySeed(
        TEST_RECORDS_NAME,
        {
            "dataset": "timesheet_entries",
            "columns": ["work_date", "person_name", "project", "hours", "note"],
            "filters": [{"column": "team_name", "op": "eq", "value": TEST_RECORDS_NAME}],
            "sort": [{"column": "work_date", "direction": "asc"}],
        },
        age=TEST_RECORDS_AGE,
    ),
)

# One of each kind.
SAMPLE_REPORTS = (
    ReportSeed(
        "Approved hours last 7 days",
        {
            "name": "Hours by team",
            "kind": "coded",
            "columns": [
                {"name": "work_date", "width": 14},
                {"name": "person_name", "width": 34},
                {"name": "project", "width": None},
                {"name": "hours", "width": 12},
            ],
            "code_column": "team_name",
            # The code as the report prints it (the team's name), described by where the team works.
            "code_descriptions": {team.name: team.location for team in NORTHWIND.places},
            "title": "Approved hours by team",
            "subtitle": "The last 7 days, with each team's subtotal",
            "page_size": "A4",
            "orientation": "portrait",
            "show_filters": True,
            "show_generated_at": True,
        },
    ),
    ReportSeed(
        "Team roster",
        {
            "name": "Team roster",
            "kind": "table",
            "columns": [
                {"name": "team_name", "width": 22},
                {"name": "full_name", "width": 28},
                {"name": "job_title", "width": 20},
                {"name": "email", "width": None},
                {"name": "started_on", "width": 12},
            ],
            "title": "Team roster",
            "subtitle": "Active employees by team",
            "page_size": "A4",
            "orientation": "landscape",
            "show_filters": False,
            "show_generated_at": True,
        },
    ),
    ReportSeed(
        "Pending time off",
        {
            "name": "Pending time off by team",
            "kind": "summary",
            "summary": {
                "group_column": "team_name",
                "figures": [
                    {"function": "count", "label": "Requests waiting"},
                    {"function": "sum", "column": "days", "label": "Days asked for"},
                    {"function": "avg", "column": "days", "label": "Average request (days)"},
                ],
            },
            "title": "Pending time off by team",
            "subtitle": "Requests waiting for a decision",
            "page_size": "A4",
            "orientation": "portrait",
            "show_filters": True,
            "show_generated_at": True,
        },
    ),
    ReportSeed(
        TEST_RECORDS_NAME,
        {
            "name": TEST_RECORDS_NAME,
            "kind": "table",
            "columns": [
                {"name": "work_date", "width": 14},
                {"name": "person_name", "width": 30},
                {"name": "project", "width": None},
                {"name": "hours", "width": 10},
                {"name": "note", "width": None},
            ],
            "title": TEST_RECORDS_NAME,
            "subtitle": "Every hostile value, as each file must carry it",
            "page_size": "A4",
            "orientation": "landscape",
            "show_filters": True,
            "show_generated_at": True,
        },
        age=TEST_RECORDS_AGE,
    ),
)
