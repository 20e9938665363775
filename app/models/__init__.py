"""All models, imported here so Alembic and the app see every table."""

from app.models.audit import AuditEvent
from app.models.coverage import CoverageDataset, CoverageVersion
from app.models.datasets import Shift, Team, TeamMember, TimeOffRequest, TimesheetEntry
from app.models.export_destination import ExportDestination
from app.models.export_execution import ExportExecution, ExportJobEvent
from app.models.export_file import ExportFile, ExportFileRequest
from app.models.export_notice import ExportNotice
from app.models.export_package import ExportPackage, ExportPart, ExportVolume
from app.models.export_settings import ExportSettings
from app.models.package_delivery import ExportDelivery, ExportDeliveryAttempt
from app.models.query import SavedQuery
from app.models.report import Report
from app.models.schedule import (
    CommunicationTemplate,
    CommunicationTemplateVersion,
    RecipientDelivery,
    Schedule,
    ScheduleDestination,
    ScheduleRecipient,
    ScheduleRun,
    ScheduleRunAttempt,
    ScheduleUnsubscribe,
)
from app.models.schedule_destination_delivery import DestinationDelivery, DestinationDeliveryAttempt
from app.models.workspace import Membership, Person, Workspace

__all__ = [
    "AuditEvent",
    "CommunicationTemplate",
    "CommunicationTemplateVersion",
    "CoverageDataset",
    "CoverageVersion",
    "DestinationDelivery",
    "DestinationDeliveryAttempt",
    "ExportDelivery",
    "ExportDeliveryAttempt",
    "ExportDestination",
    "ExportExecution",
    "ExportJobEvent",
    "ExportNotice",
    "ExportPackage",
    "ExportPart",
    "ExportSettings",
    "ExportVolume",
    "Membership",
    "Person",
    "ExportFile",
    "ExportFileRequest",
    "RecipientDelivery",
    "Report",
    "SavedQuery",
    "Schedule",
    "ScheduleDestination",
    "ScheduleRecipient",
    "ScheduleRun",
    "ScheduleRunAttempt",
    "ScheduleUnsubscribe",
    "Shift",
    "Team",
    "TeamMember",
    "TimeOffRequest",
    "TimesheetEntry",
    "Workspace",
]
