"""Object storage: `get_storage()` gives the configured backend (STORAGE_URL).

`file:///absolute/path` is a directory on this machine; `s3://bucket/optional/prefix` is an S3
bucket (at the settings' `storage_endpoint_url`: S3_ENDPOINT_URL or AWS_ENDPOINT_URL, AWS itself
when neither is set).
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

from flask import current_app

from app.storage.base import (
    InvalidKey,
    MultipartUpload,
    ObjectMissing,
    PartBuffer,
    PartWriter,
    Storage,
    StorageError,
    StorageFull,
    check_key,
    check_key_under,
)

__all__ = [
    "InvalidKey",
    "MultipartUpload",
    "ObjectMissing",
    "PartBuffer",
    "PartWriter",
    "Storage",
    "StorageError",
    "StorageFull",
    "check_key",
    "check_key_under",
    "get_storage",
    "storage_from_url",
]

_EXPECTED = "expected file:///absolute/path or s3://bucket/optional/prefix"
_BUCKET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def storage_from_url(
    url: str, part_size: int, *, s3_endpoint_url: str | None = None, s3_region: str | None = None
) -> Storage:
    """The backend a storage URL names; ValueError for anything else. An S3 bucket is reached at
    `s3_endpoint_url` (AWS itself when None) in `s3_region` (boto3's own choice when None)."""
    if part_size <= 0:
        raise ValueError(f"storage part size must be positive, not {part_size}")
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise ValueError(f"storage URL {url!r} must not have a query or fragment; {_EXPECTED}")
    if parts.scheme == "file":
        path = unquote(parts.path)
        if parts.netloc not in ("", "localhost") or not path.startswith("/"):
            raise ValueError(f"storage URL {url!r} is not an absolute file path; {_EXPECTED}")
        from app.storage.filesystem import FilesystemStorage

        return FilesystemStorage(Path(path), part_size)
    if parts.scheme == "s3":
        prefix = unquote(parts.path).strip("/")
        if not _BUCKET.match(parts.netloc):
            raise ValueError(f"storage URL {url!r} does not name a bucket; {_EXPECTED}")
        try:
            if prefix:
                check_key(prefix)
        except InvalidKey as exc:
            raise ValueError(f"storage URL {url!r} has an invalid prefix {prefix!r}") from exc
        from app.storage.s3 import S3Storage, make_client

        return S3Storage(parts.netloc, prefix, part_size, make_client(s3_endpoint_url, s3_region))
    raise ValueError(f"unsupported storage URL {url!r}; {_EXPECTED}")


_instances: dict[tuple[str, int, str | None, str, int], Storage] = {}
_instances_lock = threading.Lock()


def get_storage() -> Storage:
    """The configured backend, one per (URL, part size, S3 endpoint and region) in this process.

    The process id is part of the cache key: a forked worker builds its own S3 client rather
    than sharing its parent's connections.
    """
    settings = current_app.config["SETTINGS"]
    cache_key = (
        settings.storage_url,
        settings.storage_part_size,
        settings.storage_endpoint_url,
        settings.storage_region,
        os.getpid(),
    )
    with _instances_lock:
        storage = _instances.get(cache_key)
        if storage is None:
            storage = _instances[cache_key] = storage_from_url(
                settings.storage_url,
                settings.storage_part_size,
                s3_endpoint_url=settings.storage_endpoint_url,
                s3_region=settings.storage_region,
            )
        return storage
