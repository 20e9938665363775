from flask import render_template, request

from app.blueprints.audit import bp
from app.blueprints.guards import workspace_administrator
from app.services import audit_log


@bp.get("/")
@workspace_administrator
def index(workspace_id: int):
    """The workspace's audit log, for its administrators (404 for everyone else)."""
    filters = audit_log.parse_filters(request.args)
    actions, people = audit_log.actions_and_people(workspace_id)
    return render_template(
        "audit/index.html", page=audit_log.page(workspace_id, filters), filters=filters, actions=actions, people=people
    )
