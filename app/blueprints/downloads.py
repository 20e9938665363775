"""Answering a stored file as a download: the files page's link, a package's files and an email's
public link alike.

A file on S3 storage is a redirect to a presigned URL, so the browser fetches the bytes from the
store and no web process streams them. A file in a storage folder is sent from its path with
ETag, Last-Modified and `Accept-Ranges: bytes`, so a broken download resumes (`curl -C -`, a
browser's resume) with a Range request instead of starting again. Either way the caller has
checked access and expiry before this is reached, for every request, Range requests included.
"""

from __future__ import annotations

from flask import redirect, request, send_file
from werkzeug.wrappers import Response

from app.services.pages.stored_download import Download, RemoteDownload
from app.storage.content_disposition import attachment_disposition


def stored_file_response(download: Download) -> Response:
    """The redirect to the store, or the file sent from this machine (a 206 for a Range request)."""
    if isinstance(download, RemoteDownload):
        # 303: fetch that other URL with a GET, the one method it is signed for.
        response = redirect(download.url, code=303)
        # The URL expires within minutes, so nothing may keep this answer to replay it later.
        response.cache_control.no_store = True
    else:
        response = send_file(download.path, mimetype=download.mimetype, conditional=True, etag=True)
        response.headers["Content-Disposition"] = attachment_disposition(download.file_name)
        response.headers["X-Content-Type-Options"] = "nosniff"
    response.cache_control.private = True
    return response


def starts_a_download(response: Response) -> bool:
    """Whether answering this request with `response` is one more download of the file.

    A HEAD fetches nothing and a 304 sends nothing. A Range request from a later byte resumes (or
    fetches another piece of) a download already counted, so only a request without a Range, or
    with one from the first byte, starts a new one.
    """
    if request.method != "GET" or response.status_code == 304:
        return False
    return request.range is None or request.range.ranges[0][0] == 0
