from flask import flash, g, redirect, render_template, request, url_for

from app.blueprints.audit import bp
from app.blueprints.file_forms import file_from_request_form
from app.blueprints.guards import workspace_administrator
from app.domain import text_rules
from app.domain.errors import ValidationError
from app.services import audit_log, list_pages


@bp.get("/")
@workspace_administrator
def index(workspace_id: int):
    """The workspace's audit log, for its administrators (404 for everyone else)."""
    listing = list_pages.read_request(audit_log.AUDIT_LIST, request.args)
    actions, people = audit_log.actions_and_people(workspace_id)
    return render_template(
        "audit/index.html",
        page=audit_log.page(g.access, listing),
        actions=actions,
        people=people,
        request_token=text_rules.new_request_token(),
    )


@bp.post("/files")
@workspace_administrator
def request_file(workspace_id: int):
    """A CSV file of the events the page's filters keep, made like every export file: its page
    shows the progress, and the Files list keeps it for download."""
    listing = list_pages.read_request(audit_log.AUDIT_LIST, request.form)
    try:
        return file_from_request_form(
            lambda token: audit_log.request_csv_file(g.access, listing, token),
            "Your file of the audit log is queued. This page shows its progress.",
        )
    except ValidationError as error:
        flash(str(error))
        return redirect(url_for(".index", workspace_id=workspace_id, **listing.params(after=None)))
