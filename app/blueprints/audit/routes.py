from flask import g, render_template, request

from app.blueprints.audit import bp
from app.blueprints.file_forms import file_from_request_form
from app.blueprints.guards import workspace_administrator
from app.domain.errors import ValidationError
from app.domain.values import text_rules
from app.services.pages import list_pages
from app.services.pages.list_pages import ListRequest
from app.services.workspace import audit_log


@bp.get("/")
@workspace_administrator
def index(workspace_id: int):
    """The workspace's audit log, for its administrators (404 for everyone else)."""
    return _log_page(list_pages.read_request(audit_log.AUDIT_LIST, request.args))


@bp.post("/files")
@workspace_administrator
def request_file(workspace_id: int):
    """A CSV file of the events the page's filters keep, made like every export file: its page
    shows the progress, and the Files list keeps it for download."""
    listing = list_pages.read_request(audit_log.AUDIT_LIST, request.form)
    try:
        return file_from_request_form(
            listing.filters,
            lambda key: audit_log.request_csv_file(g.access, listing, key),
        )
    except ValidationError as error:
        return _log_page(listing, file_error=error), 400


def _log_page(listing: ListRequest, file_error: ValidationError | None = None):
    actions, people = audit_log.actions_and_people(g.workspace_id)
    return render_template(
        "audit/index.html",
        page=audit_log.page(g.access, listing),
        actions=actions,
        people=people,
        request_token=text_rules.new_request_token(),
        file_error=file_error,
    )
