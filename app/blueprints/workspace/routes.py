from flask import redirect, render_template, url_for
from flask_login import current_user, login_required
from sqlalchemy import func, select

from app.blueprints.guards import workspace_member
from app.blueprints.workspace import bp
from app.extensions import db
from app.models import QueryExport, SavedQuery
from app.services.workspaces import live_workspaces_of


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
    queries = db.session.scalar(
        select(func.count()).select_from(SavedQuery).where(SavedQuery.workspace_id == workspace_id)
    )
    recent = db.session.execute(
        select(QueryExport)
        .where(QueryExport.workspace_id == workspace_id, QueryExport.requester_id == current_user.id)
        .order_by(QueryExport.requested_at.desc())
        .limit(5)
    ).scalars().all()
    return render_template("workspace/overview.html", query_count=queries, recent=recent)
