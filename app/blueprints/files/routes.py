"""Files: the person's own export files, their progress, and their download.

A file is the requester's alone (INV-04): another person's file answers 404 here, whoever
asks, an administrator included; except a file a schedule produced, which people with
schedule-management authority read too (file_library.get_file holds the rule).
"""

from __future__ import annotations

from flask import current_app, flash, g, redirect, render_template, request, url_for
from flask_htmx.responses import HTMXResponseStopPolling

from app.blueprints.downloads import stored_file_response
from app.blueprints.files import bp
from app.blueprints.fragments import fragment_of
from app.blueprints.guards import visible_or_404, workspace_member
from app.blueprints.query_vocabulary import query_vocabulary
from app.domain.errors import AccessDenied
from app.domain.files import file_warnings
from app.models import ExportFile
from app.models.export_file import FileKind
from app.models.types import utcnow
from app.services.files import file_cancellation, file_library
from app.services.files.file_cancellation import CannotCancel
from app.services.files.file_library import FileExpired, FileNotReady
from app.services.pages import list_pages
from app.services.schedules import schedules
from app.services.sources import saved_queries
from app.services.workspace import audit_log
from app.storage import StorageError

bp.context_processor(query_vocabulary)


@bp.context_processor
def cancel_rule() -> dict:
    return {"may_cancel": lambda export: file_cancellation.may_cancel(g.access, export)}


@bp.context_processor
def file_choices() -> dict:
    return {"choice_words": file_library.choice_words}


@bp.get("/")
@workspace_member
def index(workspace_id: int):
    spec = file_library.file_list(schedules.visible_names(g.access))
    listing = list_pages.read_request(spec, request.args)
    page = file_library.page_files(g.access, listing, utcnow())
    return render_template("files/index.html", page=page, spec=spec, schedule_names=schedules.schedule_names(page.rows))


@bp.get("/<int:file_id>")
@workspace_member
def detail(workspace_id: int, file_id: int):
    export = _readable_file(file_id)
    return render_template(
        "files/detail.html",
        audit_selection=audit_log.selection_facts(export) if export.kind == FileKind.AUDIT else None,
        audit_page_args=audit_log.page_args(export) if export.kind == FileKind.AUDIT else None,
        **_facts(export),
    )


@bp.get("/<int:file_id>/progress")
@fragment_of("files.detail")
@workspace_member
def progress(workspace_id: int, file_id: int):
    """The progress fragment; once the file has settled, HTTP 286 tells htmx to stop polling.

    On the file page (view=detail) the settled fragment carries the outcome (the Download link,
    or why it failed) instead of reloading the page, which would lose the person's place.
    """
    export = _readable_file(file_id)
    if request.args.get("view") == "detail":
        body = render_template("files/_file_live.html", settled_now=export.is_settled, **_facts(export))
    else:
        body = render_template("files/_progress.html", file=export, view="list")
    return HTMXResponseStopPolling(body) if export.is_settled else body


@bp.post("/<int:file_id>/cancel")
@fragment_of("files.detail")
@workspace_member
def cancel(workspace_id: int, file_id: int):
    """Cancel a queued or running file. From the list (htmx) the answer is the file's status cell;
    from the file page, the page again with what happened."""
    export = _readable_file(file_id)
    try:
        file_cancellation.cancel_file(g.access, export)
        notice = None
    except (CannotCancel, AccessDenied) as refused:
        notice = str(refused)
    if request.headers.get("HX-Request") == "true":
        if request.form.get("view") == "detail":
            # The page's facts with what happened; the status line says it and takes focus.
            return render_template(
                "files/_file_live.html", settled_now=export.is_settled, cancel_notice=notice, **_facts(export)
            )
        return render_template("files/_progress.html", file=export, view="list", cancel_notice=notice)
    flash(notice or "The file was cancelled.")
    return redirect(url_for("files.detail", workspace_id=workspace_id, file_id=file_id))


@bp.get("/<int:file_id>/download")
@workspace_member
def download(workspace_id: int, file_id: int):
    export = _readable_file(file_id)
    try:
        download = file_library.open_download(export, utcnow())
    except FileExpired:
        return render_template("files/unavailable.html", file=export, reason="expired"), 410
    except FileNotReady:
        return render_template("files/unavailable.html", file=export, reason="not_ready"), 409
    except StorageError:
        current_app.logger.exception("download of file %s could not be read from storage", export.id)
        return render_template("files/unavailable.html", file=export, reason="storage"), 503
    return stored_file_response(download)


def _facts(export: ExportFile) -> dict:
    """What the file page's facts (_file_live.html) show, on the page and in each of its polls."""
    source = saved_queries.get_query(g.access, export.source_query_id) if export.source_query_id else None
    return {
        "file": export,
        "source": source,
        "schedule": schedules.producing_schedule(export),
        "warning_messages": file_warnings.messages,
    }


def _readable_file(file_id: int) -> ExportFile:
    return visible_or_404(file_library.get_file, file_id)
