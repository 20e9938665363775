"""Files: the person's own export files, their progress, and their download.

A file is the requester's alone (INV-04): another person's file answers 404 here, whoever
asks, an administrator included; except a file a schedule produced, which people with
schedule-management authority read too (file_library.get_file holds the rule).
"""

from __future__ import annotations

from flask import current_app, g, render_template, request
from flask_htmx.responses import HTMXResponseStopPolling

from app.blueprints.downloads import stored_file_response
from app.blueprints.files import bp
from app.blueprints.guards import visible_or_404, workspace_member
from app.blueprints.query_vocabulary import query_vocabulary
from app.domain import file_warnings
from app.models import QueryExport
from app.models.types import utcnow
from app.services import file_library, saved_queries
from app.services.file_library import FileExpired, FileNotReady
from app.storage import StorageError

bp.context_processor(query_vocabulary)


@bp.get("/")
@workspace_member
def index(workspace_id: int):
    files = file_library.list_files(g.access)
    return render_template("files/index.html", files=files, limit=file_library.LIST_LIMIT)


@bp.get("/<int:file_id>")
@workspace_member
def detail(workspace_id: int, file_id: int):
    export = _readable_file(file_id)
    source = saved_queries.get_query(g.access, export.source_query_id) if export.source_query_id else None
    return render_template(
        "files/detail.html",
        file=export,
        source=source,
        schedule=file_library.producing_schedule(export),
        warning_messages=file_warnings.messages,
    )


@bp.get("/<int:file_id>/progress")
@workspace_member
def progress(workspace_id: int, file_id: int):
    """The progress fragment; once the file has settled, HTTP 286 tells htmx to stop polling.

    The detail page (view=detail) is reloaded then, to show the outcome in full.
    """
    export = _readable_file(file_id)
    view = "detail" if request.args.get("view") == "detail" else "list"
    body = render_template("files/_progress.html", file=export, view=view)
    if not export.is_settled:
        return body
    response = HTMXResponseStopPolling(body)
    if view == "detail":
        response.headers["HX-Refresh"] = "true"
    return response


@bp.get("/<int:file_id>/download")
@workspace_member
def download(workspace_id: int, file_id: int):
    export = _readable_file(file_id)
    try:
        opened = file_library.open_download(export, utcnow())
    except FileExpired:
        return render_template("files/unavailable.html", file=export, reason="expired"), 410
    except FileNotReady:
        return render_template("files/unavailable.html", file=export, reason="not_ready"), 409
    except StorageError:
        current_app.logger.exception("download of file %s could not be read from storage", export.id)
        return render_template("files/unavailable.html", file=export, reason="storage"), 503
    return stored_file_response(opened)


def _readable_file(file_id: int) -> QueryExport:
    return visible_or_404(file_library.get_file, file_id)
