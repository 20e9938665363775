"""Answering a form that asks for an export file (of a query, a report or the audit log).

Each form carries a one-time token, and the file is admitted under a key made of the token and the
choices sent (text_rules.request_key): the first send admits the file, and every later send of the
same form with the same choices (a refresh, the back button, a double click) finds that file
instead of making another. Either way the person lands on the file's page, which shows its progress.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flask import flash, g, redirect, request, url_for
from werkzeug.wrappers import Response

from app.domain.values import text_rules
from app.models import ExportFile
from app.services.files.file_requests import ALREADY_REQUESTED, file_of_request_form


def file_from_request_form(choices: Mapping[str, object], admit: Callable[[str | None], ExportFile]) -> Response:
    """Admit the form's file with `admit(key)` and go to its page, whose status line says it is
    queued and follows it from there (no flash that would stay "queued" once it settled); the same
    form sent again with the same `choices` goes to the file it already made, saying so.
    ValidationError (a damaged token, or admission's own) and AccessDenied reach the caller."""
    key = text_rules.request_key(request.form.get("request_token"), choices)
    export = file_of_request_form(g.access, key)
    if export is not None:
        flash(ALREADY_REQUESTED)
    else:
        export = admit(key)
    return redirect(url_for("files.detail", workspace_id=g.workspace_id, file_id=export.id))
