"""The demo workspace's workspace export, so a newcomer sees every export page with content:
settings (every dataset, CSV, kept 14 days, weekly on Mondays at 02:00, the member notified), a
directory destination under DESTINATIONS_ROOT, and one package produced and delivered there.

It goes through the product's own services, validated exactly as the pages validate, and
produces the package in this process with the runner a worker would use. It runs after the demo
seed has committed (the package is read from one snapshot of committed data) and only once: a
workspace that already has export settings is left alone. Without DESTINATIONS_ROOT the settings
are still made, and the destination and package are skipped with a sentence saying so.
"""

from __future__ import annotations

import logging

from flask import current_app
from sqlalchemy import select

from app.domain.destinations.destination_input import DestinationInput
from app.domain.people.access import current_context
from app.domain.workspace_export.export_settings_rules import SettingsInput, active_datasets
from app.extensions import db
from app.models import Person, Workspace
from app.models.export_execution import ExecutionTrigger
from app.models.export_settings import ExportSettings
from app.services.demo.data_workspaces import DEMO_ADMIN_EMAIL, DEMO_MEMBER_EMAIL, DEMO_WORKSPACE
from app.services.destinations import registry
from app.services.workspace_export import execution_admission, export_settings
from app.services.workspace_export.package_production import run_execution

log = logging.getLogger(__name__)

DESTINATION_NAME = "Northwind data lake (nightly drop)"
DESTINATION_PATH = "northwind/rhythm-exports"


def seed_demo_export() -> str:
    """Set up the demo workspace's export and produce its first package; returns what was done."""
    workspace = db.session.scalar(select(Workspace).where(Workspace.name == DEMO_WORKSPACE))
    admin = db.session.scalar(select(Person).where(Person.email == DEMO_ADMIN_EMAIL))
    member = db.session.scalar(select(Person).where(Person.email == DEMO_MEMBER_EMAIL))
    if workspace is None or admin is None or member is None:
        return "The demo workspace is not there; no workspace export was set up."
    if db.session.scalar(select(ExportSettings.id).where(ExportSettings.workspace_id == workspace.id)) is not None:
        return "The demo workspace export was set up before; left as it is."
    access = current_context(workspace.id, admin.id)
    if access is None:
        return "The demo administrator is not a member of the demo workspace; no workspace export was set up."
    export_settings.save(
        access,
        SettingsInput(
            datasets=list(active_datasets()),
            format="csv",
            volume_size_mb="256",
            retention_days="14",
            cadence="weekly",
            cadence_time="02:00",
            cadence_weekday="0",
            cadence_day="",
            notify_person_ids=[str(member.id)],
            status="active",
        ),
        expected_version=None,
    )
    if current_app.config["SETTINGS"].destinations_root is None:
        return "Demo export settings made; DESTINATIONS_ROOT is not set, so no destination or package."
    registry.add(
        access,
        DestinationInput(
            name=DESTINATION_NAME,
            kind="directory",
            bucket="",
            region="",
            endpoint_url="",
            access_key_id="",
            secret="",
            path=DESTINATION_PATH,
        ),
    )
    execution = execution_admission.admit_uncommitted(workspace.id, admin, ExecutionTrigger.MANUAL)
    db.session.commit()
    outcome = run_execution(execution.id)
    log.info("demo workspace export %s: %s", execution.id, outcome)
    return f"Demo workspace export set up; its first package: {outcome}."
