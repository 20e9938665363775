"""The demo workspace's export: settings, a directory destination and one delivered package, made
once through the product's own services so a newcomer sees every export page with content."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import ExportDelivery, ExportDestination, ExportPackage, ExportSettings, Workspace
from app.services.demo.data_workspaces import DEMO_WORKSPACE
from app.services.demo.demo_export_seed import DESTINATION_PATH, seed_demo_export
from app.services.demo.demo_seed import seed_demo
from app.services.workspace_export.coverage import reconcile_coverage

ROWS = 300


@pytest.fixture
def seeded(app_context, isolated_storage):
    seed_demo(ROWS)
    reconcile_coverage()
    return db.session.scalar(select(Workspace).where(Workspace.name == DEMO_WORKSPACE))


def test_the_demo_workspace_gets_settings_a_destination_and_a_delivered_package(seeded, destinations_root):
    said = seed_demo_export()

    assert said.endswith("succeeded.")
    settings = db.session.scalar(select(ExportSettings).where(ExportSettings.workspace_id == seeded.id))
    assert (settings.status, settings.cadence, settings.retention_days) == ("active", "weekly", 14)
    destination = db.session.scalar(select(ExportDestination).where(ExportDestination.workspace_id == seeded.id))
    assert (destination.kind, destination.path) == ("directory", DESTINATION_PATH)
    package = db.session.scalar(select(ExportPackage).where(ExportPackage.workspace_id == seeded.id))
    assert package.status == "available" and package.datasets_count == len(settings.datasets)
    delivery = db.session.scalar(select(ExportDelivery).where(ExportDelivery.package_id == package.id))
    assert delivery.status == "delivered", delivery.failure_summary
    (manifest,) = destinations_root.glob(f"{DESTINATION_PATH}/workspace-{seeded.id}/*/manifest.json")
    datasets = json.loads(manifest.read_text())["datasets"]
    assert sorted(entry["name"] for entry in datasets) == sorted(settings.datasets)


def test_a_second_run_leaves_the_workspace_export_as_it_is(seeded, destinations_root):
    seed_demo_export()
    assert seed_demo_export() == "The demo workspace export was set up before; left as it is."
    assert len(db.session.scalars(select(ExportPackage)).all()) == 1


def test_without_a_destinations_root_only_the_settings_are_made(seeded):
    assert "DESTINATIONS_ROOT is not set" in seed_demo_export()
    assert db.session.scalars(select(ExportDestination)).all() == []
    assert db.session.scalars(select(ExportPackage)).all() == []
