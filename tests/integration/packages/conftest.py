"""Workspace export scenarios: the standard world with export settings and an administrator in the
other workspace."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.models import Person, Workspace
from app.models.export_settings import ExportSettings
from tests import factories


@dataclass
class ExportWorld:
    workspace: Workspace
    admin: Person
    member: Person
    settings: ExportSettings
    other_workspace: Workspace
    other_admin: Person


@pytest.fixture
def export_world(world) -> ExportWorld:
    """The standard world's workspace with active export settings covering every dataset."""
    settings = factories.make_export_settings(world.workspace)
    other_admin = factories.make_member(world.other_workspace, role="admin").person
    return ExportWorld(
        workspace=world.workspace,
        admin=world.admin,
        member=world.member,
        settings=settings,
        other_workspace=world.other_workspace,
        other_admin=other_admin,
    )
