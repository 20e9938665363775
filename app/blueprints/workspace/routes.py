from flask import redirect, render_template, url_for
from flask_login import current_user, login_required
from sqlalchemy import func, select

from app.blueprints.guards import workspace_member
from app.blueprints.workspace import bp
from app.extensions import db
from app.models import Membership, QueryExport, SavedQuery, Workspace


@bp.get("/")
@login_required
def home():
    """One workspace: go straight to it; several: let the person choose."""
    memberships = db.session.execute(
        select(Membership)
        .join(Workspace)
        .where(Membership.person_id == current_user.id, Workspace.status == "live")
        .order_by(Workspace.name)
    ).scalars().all()
    if len(memberships) == 1:
        return redirect(url_for("workspace.overview", workspace_id=memberships[0].workspace_id))
    if not memberships and current_user.is_staff:
        return redirect(url_for("staff.index"))
    return render_template("workspace/choose.html", memberships=memberships)


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
