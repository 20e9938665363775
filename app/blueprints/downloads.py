"""Answering a stored file as a download: the files page's link and an email's public link alike."""

from __future__ import annotations

from flask import Response, send_file

from app.services.file_library import Download


def stored_file_response(opened: Download) -> Response:
    """The file streamed from storage as an attachment under its own name, never cached by others.

    Werkzeug writes the name as filename= and, when it is not ASCII, as RFC 5987 filename*=,
    quoting it so that no character of the name can end the header or add another.
    """
    response = send_file(
        # Werkzeug reads any object with read() and close(); its annotation asks for a full IO[bytes].
        opened.stream,  # type: ignore[arg-type]
        mimetype=opened.mimetype,
        as_attachment=True,
        download_name=opened.file_name,
        conditional=False,
        etag=False,
    )
    response.content_length = opened.size
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.cache_control.private = True
    return response
