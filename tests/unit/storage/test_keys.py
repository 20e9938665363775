"""Storage keys, prefixes, and choosing a backend from STORAGE_URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask

from app.config import Settings
from app.storage import InvalidKey, check_key, check_key_under, get_storage, storage_from_url
from app.storage.filesystem import FilesystemStorage
from app.storage.s3 import S3Storage


@pytest.mark.parametrize("key", ["file.csv", "ws-1/files/export_1.xlsx", "pkg/v=2/part+1.jsonl.gz", "a..b"])
def test_check_key_accepts_plain_relative_paths(key):
    """A relative path of safe characters is returned unchanged."""
    assert check_key(key) == key


@pytest.mark.parametrize(
    "key",
    ["", "/etc/passwd", "..", "../x", "a/../b", "a/./b", "a//b", "a/", "a b", "a\\b", "a\nb", "é.csv", "a:b"],
)
def test_check_key_refuses_unsafe_keys(key):
    """Absolute paths, dot segments, empty segments and odd characters raise InvalidKey."""
    with pytest.raises(InvalidKey):
        check_key(key)


@pytest.mark.parametrize("prefix", ["packages/p-1", "packages/p-1/"])
def test_check_key_under_accepts_a_key_inside_the_prefix(prefix):
    """A key below the prefix passes, with or without a trailing slash on the prefix."""
    assert check_key_under("packages/p-1/volume-001.csv.gz", prefix) == "packages/p-1/volume-001.csv.gz"


@pytest.mark.parametrize(
    "key",
    ["packages/p-2/volume.csv", "packages/p-10/volume.csv", "packages/p-1", "packages/p-1/../p-2/v.csv"],
)
def test_check_key_under_refuses_a_key_outside_the_prefix(key):
    """A sibling, a longer name sharing the prefix, the prefix itself or a `..` escape is refused."""
    with pytest.raises(InvalidKey):
        check_key_under(key, "packages/p-1")


def test_check_key_under_refuses_an_invalid_prefix():
    """The prefix must itself be a valid key."""
    with pytest.raises(InvalidKey):
        check_key_under("x/y.csv", "../x")


def test_file_url_gives_a_filesystem_backend():
    """file:///path is a directory backend at that (percent-decoded) path."""
    storage = storage_from_url("file:///srv/rhythm%20data/storage", 4096)

    assert isinstance(storage, FilesystemStorage)
    assert storage.root == Path("/srv/rhythm data/storage")
    assert storage.part_size == 4096


@pytest.mark.parametrize(("url", "prefix"), [("s3://bucket", ""), ("s3://bucket/", ""), ("s3://bucket/a/b/", "a/b")])
def test_s3_url_gives_an_s3_backend(url, prefix):
    """s3://bucket/prefix is an S3 backend on that bucket, the prefix without slashes."""
    storage = storage_from_url(url, 8 * 1024 * 1024)

    assert isinstance(storage, S3Storage)
    assert (storage.bucket, storage.prefix) == ("bucket", prefix)


@pytest.mark.parametrize(
    "url",
    [
        "/srv/storage",
        "file://relative/path",
        "file:///srv?x=1",
        "s3://",
        "s3:///prefix",
        "s3://user@bucket/x",
        "s3://bucket/../x",
        "https://bucket.example.com/x",
        "ftp://host/x",
    ],
)
def test_unsupported_storage_urls_raise_value_error(url):
    """Anything but file:///absolute or s3://bucket/prefix is refused with a clear ValueError."""
    with pytest.raises(ValueError, match="storage URL"):
        storage_from_url(url, 1024)


def test_part_size_must_be_positive():
    """A zero part size is refused."""
    with pytest.raises(ValueError, match="part size"):
        storage_from_url("file:///srv/storage", 0)


def _app(url: str, part_size: int = 1024) -> Flask:
    app = Flask(__name__)
    app.config["SETTINGS"] = Settings.from_environment(
        {"STORAGE_URL": url, "STORAGE_PART_SIZE": str(part_size), "SECRET_KEY": "k", "CREDENTIALS_KEY": "k"}
    )
    return app


def test_get_storage_caches_one_backend_per_configuration(tmp_path):
    """The same settings give the same instance; another URL or part size gives another."""
    url = (tmp_path / "storage").as_uri()
    with _app(url).app_context():
        first = get_storage()
        assert get_storage() is first
    with _app(url).app_context():
        assert get_storage() is first
    with _app(url, part_size=2048).app_context():
        assert get_storage() is not first
    with _app((tmp_path / "other").as_uri()).app_context():
        assert get_storage().root == tmp_path / "other"
