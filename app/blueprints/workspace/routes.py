from flask import g, redirect, render_template, url_for
from flask_login import current_user, login_required

from app.blueprints.guards import workspace_member
from app.blueprints.workspace import bp
from app.models.types import utcnow
from app.services.accounts.workspaces import live_workspaces_of
from app.services.files import file_library
from app.services.pages import list_pages
from app.services.sources import reports, saved_queries
from app.services.workspace_export import package_history


@bp.get("/")
@login_required
def home():
    """One workspace: go straight to it; several: let the person choose."""
    workspaces = live_workspaces_of(current_user.id)
    if len(workspaces) == 1:
        return redirect(url_for("workspace.overview", workspace_id=workspaces[0].id))
    if not workspaces and current_user.is_staff:
        return redirect(url_for("staff.index"))
    return render_template("workspace/choose.html", workspaces=workspaces)


@bp.get("/w/<int:workspace_id>/")
@workspace_member
def overview(workspace_id: int):
    """What needs attention (failed files, files about to expire, and for an administrator the
    packages whose delivery failed), the person's recent files, and the reports."""
    now = utcnow()
    recently_changed = list_pages.ListRequest(sort="updated")
    return render_template(
        "workspace/overview.html",
        failed=file_library.failed_files(g.access),
        failed_deliveries=package_history.packages_with_failed_deliveries(g.workspace_id) if g.access.is_admin else [],
        expiring=file_library.expiring_files(g.access, now),
        expiring_days=file_library.EXPIRING_WITHIN.days,
        recent=file_library.recent_files(g.access),
        reports=reports.page_reports(g.access, recently_changed),
        queries=saved_queries.page_queries(g.access, recently_changed),
    )
