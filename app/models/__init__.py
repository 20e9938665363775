"""All models, imported here so Alembic and the app see every table."""

from app.models.datasets import Shift, Team, TeamMember, TimeOffRequest, TimesheetEntry
from app.models.export_file import QueryExport, QueryExportRequest
from app.models.query import SavedQuery
from app.models.report import Report
from app.models.workspace import Membership, Person, Workspace

__all__ = [
    "Membership",
    "Person",
    "QueryExport",
    "QueryExportRequest",
    "Report",
    "SavedQuery",
    "Shift",
    "Team",
    "TeamMember",
    "TimeOffRequest",
    "TimesheetEntry",
    "Workspace",
]
