"""Where a download's bytes come from: a short-lived URL on the store, or a file on this machine.

The store decides (`Storage.download_url`): S3 storage answers with a presigned URL, so a web
process never streams a large file; directory storage has none, so the web process sends the
file itself, with HTTP Range support. Callers check access and expiry first; this only locates.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flask import current_app
from werkzeug.utils import get_content_type

from app.storage import get_storage


@dataclass(frozen=True)
class RemoteDownload:
    """The URL the browser is sent to; it carries the file name and type and expires on its own."""

    url: str


@dataclass(frozen=True)
class LocalDownload:
    path: Path
    file_name: str
    mimetype: str


Download = RemoteDownload | LocalDownload


def stored_download(key: str, file_name: str, mimetype: str) -> Download:
    """The object under `key`, downloaded as `file_name` of type `mimetype`.

    `ObjectMissing` when nothing is stored under the key; other storage errors as the store raises them.
    """
    storage = get_storage()
    # A text type gets its charset here as Werkzeug adds it to a response this process sends.
    content_type = get_content_type(mimetype, "utf-8")
    expires_in = current_app.config["SETTINGS"].download_url_seconds
    url = storage.download_url(key, file_name, content_type, expires_in)
    if url is not None:
        return RemoteDownload(url)
    return LocalDownload(storage.local_path(key), file_name, mimetype)
