"""The header every workspace page shares: the workspace's name, the switcher and the sections.

A section is marked current by blueprint, so every page of an area (its list, detail pages,
forms) marks the same entry; administrators' sections are left out for everyone else. Base.html calls
`workspace_navigation()` itself, so htmx fragments (which do not extend it) cost no query.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app, g, request, url_for
from flask_login import current_user

from app.services.accounts.workspaces import WorkspaceChoice, live_workspaces_of


@dataclass(frozen=True)
class Section:
    label: str
    endpoint: str
    blueprints: tuple[str, ...]
    admins_only: bool = False


SECTIONS = (
    Section("Overview", "workspace.overview", ("workspace",)),
    Section("Queries", "queries.index", ("queries",)),
    Section("Reports", "reports.index", ("reports",)),
    Section("Schedules", "schedules.index", ("schedules",)),
    Section("Files", "files.index", ("files",)),
    Section("Templates", "templates.index", ("templates",)),
    # Administrators' sections: anyone else would follow the link to a 404.
    Section("Workspace export", "packages.overview", ("packages", "export_settings"), admins_only=True),
    Section("Activity", "activity.index", ("activity",), admins_only=True),
    Section("Audit log", "audit.index", ("audit",), admins_only=True),
)


@dataclass(frozen=True)
class NavEntry:
    label: str
    url: str
    current: bool


@dataclass(frozen=True)
class WorkspaceNavigation:
    workspace: WorkspaceChoice
    others: list[WorkspaceChoice]
    entries: list[NavEntry]


def workspace_navigation() -> WorkspaceNavigation | None:
    """The header of the workspace in the URL for the signed-in member; None outside a workspace."""
    workspace_id = g.get("workspace_id")
    if workspace_id is None or not current_user.is_authenticated:
        return None
    workspaces = live_workspaces_of(current_user.id)
    current = next((choice for choice in workspaces if choice.id == workspace_id), None)
    if current is None:
        return None
    entries = [
        NavEntry(
            label=section.label,
            url=url_for(section.endpoint, workspace_id=workspace_id),
            current=request.blueprint in section.blueprints,
        )
        for section in SECTIONS
        if section.endpoint in current_app.view_functions and (g.access.is_admin or not section.admins_only)
    ]
    others = [choice for choice in workspaces if choice.id != workspace_id]
    return WorkspaceNavigation(workspace=current, others=others, entries=entries)
