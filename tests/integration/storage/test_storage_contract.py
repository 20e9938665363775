"""The storage contract, on the directory backend and on S3 (moto's server over HTTP)."""

from __future__ import annotations

import random

import boto3
import pytest
from botocore.config import Config

from app.storage import InvalidKey, ObjectMissing, StorageError
from app.storage.filesystem import STAGING_DIR, FilesystemStorage
from app.storage.s3 import S3Storage
from tests.fixtures.s3 import fetch

KEY = "ws-1/files/export-1.csv"


def payload(size: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def read_all(storage, key: str) -> bytes:
    return b"".join(storage.read_chunks(key))


def pending_uploads(storage) -> list:
    """Unfinished multipart uploads the backend still holds, whatever their key."""
    if isinstance(storage, S3Storage):
        return storage.client.list_multipart_uploads(Bucket=storage.bucket).get("Uploads", [])
    staging = storage.root / STAGING_DIR
    return list(staging.iterdir()) if staging.exists() else []


# -- both backends ------------------------------------------------------------------------------


def test_multipart_upload_round_trips_bytes(any_storage):
    """Several parts come back byte for byte, and complete() reports the object's size."""
    data = payload(3 * any_storage.part_size + 123)
    upload = any_storage.begin_upload(KEY)
    for start in range(0, len(data), any_storage.part_size):
        upload.upload_part(data[start : start + any_storage.part_size])

    assert upload.complete() == len(data)
    assert read_all(any_storage, KEY) == data
    assert any_storage.size(KEY) == len(data)
    assert pending_uploads(any_storage) == []


def test_part_writer_streams_uneven_writes(any_storage):
    """Writes of any length through writer() arrive whole, and the writer records the size."""
    data = payload(5 * any_storage.part_size + 7)
    with any_storage.writer(KEY) as out:
        for start in range(0, len(data), 700):
            out.write(data[start : start + 700])

    assert out.size == len(data)
    assert read_all(any_storage, KEY) == data


def test_a_part_is_stored_as_it_was_when_sent_though_its_buffer_is_refilled(any_storage):
    """PartBuffer hands every part from one buffer and overwrites it with the next part as soon as
    upload_part returns: the backend must have stored (or sent) the bytes by then."""
    first, second = payload(any_storage.part_size, seed=2), payload(any_storage.part_size, seed=3)
    buffer = bytearray(first)
    upload = any_storage.begin_upload(KEY)
    upload.upload_part(buffer)
    buffer[:] = second
    upload.upload_part(buffer)
    buffer[:] = b"\0" * len(buffer)

    assert upload.complete() == 2 * any_storage.part_size
    assert read_all(any_storage, KEY) == first + second


def test_read_chunks_respects_chunk_size(any_storage):
    """read_chunks yields pieces no larger than asked for."""
    any_storage.put_bytes(KEY, payload(1000))

    chunks = list(any_storage.read_chunks(KEY, chunk_size=300))

    assert max(len(c) for c in chunks) <= 300
    assert b"".join(chunks) == payload(1000)


def test_empty_upload_completes_as_zero_byte_object(any_storage):
    """A writer that writes nothing publishes an empty object."""
    with any_storage.writer(KEY) as out:
        pass

    assert out.size == 0
    assert any_storage.exists(KEY)
    assert any_storage.size(KEY) == 0
    assert read_all(any_storage, KEY) == b""


def test_abort_leaves_no_object(any_storage):
    """An aborted upload leaves no object, no listed key and no pending upload."""
    upload = any_storage.begin_upload(KEY)
    upload.upload_part(payload(any_storage.part_size))

    upload.abort()

    assert not any_storage.exists(KEY)
    assert any_storage.list_keys("") == []
    assert pending_uploads(any_storage) == []


def test_abort_uploads_removes_an_unfinished_earlier_upload(any_storage):
    """abort_uploads removes the leftovers of an earlier attempt at the same key only."""
    any_storage.begin_upload(KEY).upload_part(payload(any_storage.part_size))
    any_storage.begin_upload("ws-1/files/other.csv")

    assert any_storage.abort_uploads(KEY) == 1
    assert any_storage.abort_uploads(KEY) == 0
    assert len(pending_uploads(any_storage)) == 1  # the other key's upload is untouched


def test_upload_aborted_by_a_newer_attempt_cannot_be_completed(any_storage):
    """A stale attempt completing after a restart's abort_uploads fails and publishes nothing."""
    stale = any_storage.begin_upload(KEY)
    stale.upload_part(payload(any_storage.part_size))
    any_storage.abort_uploads(KEY)

    with pytest.raises(StorageError):
        stale.complete()
    assert not any_storage.exists(KEY)


def test_directory_upload_whose_data_an_abort_removed_publishes_nothing(fs_storage):
    """Mid-abort (the parts' file removed, the staging folder not yet): completing fails, no empty object appears."""
    upload = fs_storage.begin_upload(KEY)
    upload.upload_part(payload(fs_storage.part_size))
    [staging] = pending_uploads(fs_storage)
    (staging / "data~").unlink()

    with pytest.raises(StorageError, match="was aborted"):
        upload.complete()
    assert not fs_storage.exists(KEY)


def test_part_writer_aborts_on_exception(any_storage):
    """An exception inside the with-block aborts: no object, no pending upload."""
    with pytest.raises(RuntimeError, match="render failed"), any_storage.writer(KEY) as out:
        out.write(payload(3 * any_storage.part_size))
        raise RuntimeError("render failed")

    assert not any_storage.exists(KEY)
    assert pending_uploads(any_storage) == []


def test_restarted_upload_ends_with_one_object(any_storage):
    """A restart into the same key clears the abandoned attempt and leaves exactly one object."""
    abandoned = any_storage.begin_upload(KEY)
    abandoned.upload_part(payload(any_storage.part_size, seed=1))

    with any_storage.writer(KEY) as out:
        out.write(payload(2 * any_storage.part_size, seed=2))

    assert any_storage.list_keys("ws-1/") == [KEY]
    assert read_all(any_storage, KEY) == payload(2 * any_storage.part_size, seed=2)
    assert pending_uploads(any_storage) == []


def test_new_upload_replaces_an_existing_object(any_storage):
    """Completing an upload to an existing key replaces its content."""
    any_storage.put_bytes(KEY, b"old content")

    with any_storage.writer(KEY) as out:
        out.write(b"new")

    assert read_all(any_storage, KEY) == b"new"
    assert any_storage.list_keys("") == [KEY]


def test_list_keys_under_prefix(any_storage):
    """list_keys returns the sorted keys that start with the prefix, and never a pending upload."""
    for key in ("a/2.csv", "a/1.csv", "a/b/3.csv", "ab/4.csv", "c.csv"):
        any_storage.put_bytes(key, b"x")
    any_storage.begin_upload("a/pending.csv").upload_part(b"y")

    assert any_storage.list_keys("a/") == ["a/1.csv", "a/2.csv", "a/b/3.csv"]
    assert any_storage.list_keys("a") == ["a/1.csv", "a/2.csv", "a/b/3.csv", "ab/4.csv"]
    assert any_storage.list_keys("") == ["a/1.csv", "a/2.csv", "a/b/3.csv", "ab/4.csv", "c.csv"]
    assert any_storage.list_keys("missing/") == []


def test_delete_removes_the_object(any_storage):
    """delete removes an object; deleting a missing key is not an error."""
    any_storage.put_bytes(KEY, b"content")

    any_storage.delete(KEY)
    any_storage.delete(KEY)

    assert not any_storage.exists(KEY)
    assert any_storage.list_keys("") == []


BAD_KEYS = [
    "",
    "/abs/file.csv",
    "../escape.csv",
    "a/../../escape.csv",
    "a//b.csv",
    "a/",
    "./a.csv",
    "a b.csv",
    "a\\b.csv",
    "a\x00b.csv",
    "naïve.csv",
    "a/b?.csv",
]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_invalid_keys_are_refused(any_storage, key):
    """Keys that are not plain relative paths of safe characters raise InvalidKey everywhere."""
    for operation in (
        any_storage.begin_upload,
        any_storage.exists,
        any_storage.delete,
        any_storage.read_chunks,
        any_storage.abort_uploads,
    ):
        with pytest.raises(InvalidKey):
            operation(key)
    with pytest.raises(InvalidKey):
        any_storage.put_bytes(key, b"x")
    with pytest.raises(InvalidKey):
        any_storage.download_url(key, "file.csv", "text/csv", 60)
    with pytest.raises(InvalidKey):
        any_storage.writer(key)


def test_list_keys_refuses_an_escaping_prefix(any_storage):
    """A prefix with `..` is refused like a key."""
    with pytest.raises(InvalidKey):
        any_storage.list_keys("../")


def test_reading_a_missing_key_raises(any_storage):
    """read_chunks, download_url and size of a missing key raise ObjectMissing (a StorageError) at once."""
    with pytest.raises(ObjectMissing):
        any_storage.read_chunks("ws-1/missing.csv")
    with pytest.raises(ObjectMissing):
        any_storage.download_url("ws-1/missing.csv", "missing.csv", "text/csv", 60)
    with pytest.raises(StorageError):
        any_storage.size("ws-1/missing.csv")
    assert not any_storage.exists("ws-1/missing.csv")


def test_check_passes_on_a_working_store(any_storage):
    """check() returns quietly when the store is usable."""
    any_storage.check()


# -- filesystem backend -------------------------------------------------------------------------


@pytest.fixture
def blocked_storage(tmp_path):
    """A filesystem backend whose root lies under a regular file, so nothing can be created."""
    (tmp_path / "not-a-folder").write_text("a file")
    return FilesystemStorage(tmp_path / "not-a-folder" / "storage", 1024)


def test_filesystem_unwritable_root_makes_writes_fail(blocked_storage):
    """Writes, uploads and check() raise StorageError when the root cannot be created."""
    with pytest.raises(StorageError):
        blocked_storage.put_bytes(KEY, b"x")
    with pytest.raises(StorageError):
        blocked_storage.begin_upload(KEY)
    with pytest.raises(StorageError):
        blocked_storage.check()


def test_filesystem_refuses_a_symlink_out_of_root(fs_storage, tmp_path):
    """A key that resolves outside the root through a symbolic link is refused."""
    outside = tmp_path / "outside"
    outside.mkdir()
    fs_storage.check()
    (fs_storage.root / "link").symlink_to(outside)

    with pytest.raises(InvalidKey):
        fs_storage.put_bytes("link/file.csv", b"x")
    assert list(outside.iterdir()) == []
    (outside / "file.csv").write_bytes(b"outside the root")
    with pytest.raises(InvalidKey):
        fs_storage.local_path("link/file.csv")


def test_filesystem_downloads_are_sent_from_the_objects_own_file(fs_storage):
    """No URL: the web process sends the object from its path in the root."""
    fs_storage.put_bytes(KEY, b"content")

    assert fs_storage.download_url(KEY, "export.csv", "text/csv", 60) is None
    assert fs_storage.local_path(KEY) == fs_storage.root.resolve() / KEY
    assert fs_storage.local_path(KEY).read_bytes() == b"content"
    with pytest.raises(ObjectMissing):
        fs_storage.local_path("ws-1/missing.csv")


def test_filesystem_reserves_the_staging_folder(fs_storage):
    """Keys inside the staging folder are refused, and a prefix there lists nothing."""
    fs_storage.begin_upload(KEY).upload_part(b"part")

    with pytest.raises(InvalidKey):
        fs_storage.read_chunks(f"{STAGING_DIR}/anything")
    assert fs_storage.list_keys(f"{STAGING_DIR}/") == []


def test_filesystem_check_creates_the_root(tmp_path):
    """check() creates a missing root folder."""
    storage = FilesystemStorage(tmp_path / "new" / "storage", 1024)

    storage.check()

    assert storage.root.is_dir()


# -- S3 backend ---------------------------------------------------------------------------------


def test_s3_objects_live_under_the_prefix(s3_storage, s3_client):
    """Keys are stored under `prefix/` in the bucket and listed relative to it."""
    s3_storage.put_bytes(KEY, b"content")

    head = s3_client.head_object(Bucket=s3_storage.bucket, Key=f"exports/{KEY}")
    assert head["ContentLength"] == len(b"content")
    assert s3_storage.list_keys("") == [KEY]


def test_s3_download_url_answers_the_object_with_the_download_headers(s3_storage):
    """A presigned GET: the object's bytes as an attachment named and typed as asked."""
    s3_storage.put_bytes(KEY, b"id\r\n1\r\n")

    status, headers, body = fetch(s3_storage.download_url(KEY, "hours.csv", "text/csv; charset=utf-8", 60))

    assert status == 200 and body == b"id\r\n1\r\n"
    assert headers["Content-Disposition"] == "attachment; filename=hours.csv"
    assert headers["Content-Type"] == "text/csv; charset=utf-8"


def test_s3_has_no_local_files(s3_storage):
    s3_storage.put_bytes(KEY, b"content")

    with pytest.raises(StorageError):
        s3_storage.local_path(KEY)


def test_s3_abort_uploads_leaves_no_multipart_upload(s3_storage, s3_client):
    """After abort_uploads the bucket lists no multipart upload for the key."""
    for _ in range(2):
        s3_storage.begin_upload(KEY).upload_part(payload(s3_storage.part_size))

    assert s3_storage.abort_uploads(KEY) == 2
    assert s3_client.list_multipart_uploads(Bucket=s3_storage.bucket).get("Uploads", []) == []


def test_s3_missing_bucket_raises_storage_error(s3_bucket, s3_client):
    """A backend pointed at a bucket that does not exist fails check() and begin_upload."""
    storage = S3Storage("no-such-bucket", "exports", 1024, s3_client)

    with pytest.raises(StorageError, match="bucket .no-such-bucket. does not exist"):
        storage.check()
    with pytest.raises(StorageError, match="NoSuchBucket"):
        storage.begin_upload(KEY)


def test_s3_unreachable_endpoint_raises_storage_error(moto_server):
    """An endpoint that refuses connections surfaces as StorageError, not a botocore error."""
    client = boto3.client(
        "s3",
        endpoint_url="http://127.0.0.1:9",
        region_name="us-east-1",
        config=Config(retries={"max_attempts": 1}, connect_timeout=2),
    )
    storage = S3Storage("any-bucket", "", 1024, client)

    with pytest.raises(StorageError, match="could not reach the bucket"):
        storage.check()
