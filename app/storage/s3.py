"""The S3 backend (AWS or any S3-compatible store), through boto3.

Keys are stored under `prefix/` in the bucket (or at the top when the prefix is empty); every
method takes and returns keys relative to that prefix. Any failure of the store or the network
reaches callers as `StorageError` with a readable message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from app.storage.base import ChunkStream, MultipartUpload, ObjectMissing, Storage, StorageError, StorageFull, check_key
from app.storage.content_disposition import attachment_disposition

_MISSING_CODES = {"NoSuchKey", "404", "NotFound"}
# What an S3-compatible store answers when it has no room: MinIO's code, or HTTP 507.
_FULL_CODES = {"XMinioStorageFull"}
_INSUFFICIENT_STORAGE = 507


def make_client(endpoint_url: str | None, region: str | None):
    """An S3 client for the endpoint (AWS itself when None) in the region; boto3 finds the credentials."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=region,
        # Presigned download URLs in Signature Version 4, which every region and S3-compatible store
        # accepts; boto3 would sign them in the retired version 2 in us-east-1.
        config=Config(signature_version="s3v4"),
    )


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


@contextmanager
def _translated(action: str, location: str, key: str | None = None):
    """Turn boto3's errors into StorageError (ObjectMissing when a `key` was not found)."""
    try:
        yield
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code = _error_code(exc)
        if key is not None and code in _MISSING_CODES:
            raise ObjectMissing(f"no stored object {key!r} ({location})") from exc
        detail = " ".join(part for part in (code, error.get("Message", "")) if part)
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        refusal = StorageFull if code in _FULL_CODES or status == _INSUFFICIENT_STORAGE else StorageError
        raise refusal(f"S3 could not {action} {location}: {detail or exc}") from exc
    except BotoCoreError as exc:  # connection refused, timeouts, missing credentials, …
        raise StorageError(f"S3 could not {action} {location}: {exc}") from exc


class S3Storage(Storage):
    def __init__(self, bucket: str, prefix: str, part_size: int, client):
        prefix = prefix.strip("/")
        if prefix:
            check_key(prefix)
        self.bucket = bucket
        self.prefix = prefix
        self.part_size = part_size
        self.client = client

    def _full_key(self, key: str) -> str:
        check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _location(self, full_key: str = "") -> str:
        return f"s3://{self.bucket}/{full_key}"

    # -- writing -----------------------------------------------------------------------------

    def begin_upload(self, key: str) -> S3Upload:
        full_key = self._full_key(key)
        with _translated("start an upload to", self._location(full_key)):
            response = self.client.create_multipart_upload(Bucket=self.bucket, Key=full_key)
        return S3Upload(self, key, full_key, response["UploadId"])

    def abort_uploads(self, key: str) -> int:
        full_key = self._full_key(key)
        location = self._location(full_key)
        with _translated("list the unfinished uploads to", location):
            pages = self.client.get_paginator("list_multipart_uploads").paginate(Bucket=self.bucket, Prefix=full_key)
            upload_ids = [u["UploadId"] for page in pages for u in page.get("Uploads", []) if u["Key"] == full_key]
        for upload_id in upload_ids:
            S3Upload(self, key, full_key, upload_id).abort()
        return len(upload_ids)

    def put_bytes(self, key: str, data: bytes) -> None:
        full_key = self._full_key(key)
        with _translated("write", self._location(full_key)):
            self.client.put_object(Bucket=self.bucket, Key=full_key, Body=data)

    # -- reading -----------------------------------------------------------------------------

    def read_chunks(self, key: str, chunk_size: int = 256 * 1024) -> Iterator[bytes]:
        full_key = self._full_key(key)
        location = self._location(full_key)
        with _translated("read", location, key):
            body = self.client.get_object(Bucket=self.bucket, Key=full_key)["Body"]
        return ChunkStream(self._chunks(body, location, chunk_size), body.close)

    @staticmethod
    def _chunks(body, location: str, chunk_size: int) -> Iterator[bytes]:
        with _translated("read", location):
            yield from body.iter_chunks(chunk_size)

    def size(self, key: str) -> int:
        full_key = self._full_key(key)
        with _translated("read the size of", self._location(full_key), key):
            return int(self.client.head_object(Bucket=self.bucket, Key=full_key)["ContentLength"])

    def exists(self, key: str) -> bool:
        try:
            self.size(key)
        except ObjectMissing:
            return False
        return True

    def download_url(self, key: str, file_name: str, content_type: str, expires_in: int) -> str:
        """A presigned GET of the object; S3 answers it with the headers the URL names."""
        self.size(key)  # ObjectMissing now, rather than S3's own error page after the redirect
        full_key = self._full_key(key)
        with _translated("sign a download of", self._location(full_key)):
            return self.client.generate_presigned_url(
                "get_object",
                Params={
                    "Bucket": self.bucket,
                    "Key": full_key,
                    "ResponseContentDisposition": attachment_disposition(file_name),
                    "ResponseContentType": content_type,
                },
                ExpiresIn=expires_in,
            )

    def delete(self, key: str) -> None:
        full_key = self._full_key(key)
        with _translated("delete", self._location(full_key)):
            self.client.delete_object(Bucket=self.bucket, Key=full_key)

    def list_keys(self, prefix: str) -> list[str]:
        if prefix:
            check_key(prefix.rstrip("/"))
        base = f"{self.prefix}/" if self.prefix else ""
        keys: list[str] = []
        with _translated("list", self._location(base + prefix)):
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=base + prefix)
            for page in pages:
                keys.extend(item["Key"][len(base) :] for item in page.get("Contents", []))
        return sorted(keys)

    def check(self) -> None:
        with _translated("reach the bucket", self._location()):
            try:
                self.client.head_bucket(Bucket=self.bucket)
            except ClientError as exc:  # HEAD answers carry a bare status code and no message
                reason = {"404": "does not exist", "403": "refuses these credentials"}.get(_error_code(exc))
                if reason is None:
                    raise
                raise StorageError(f"S3 bucket {self.bucket!r} {reason}") from exc


class S3Upload(MultipartUpload):
    def __init__(self, storage: S3Storage, key: str, full_key: str, upload_id: str):
        self.key = key
        self.upload_id = upload_id
        self._storage = storage
        self._full_key = full_key
        self._parts: list[dict] = []
        self._size = 0

    def _call(self, action: str, method: str, **arguments):
        with _translated(action, self._storage._location(self._full_key)):
            return getattr(self._storage.client, method)(
                Bucket=self._storage.bucket, Key=self._full_key, UploadId=self.upload_id, **arguments
            )

    def upload_part(self, data: bytes | bytearray) -> None:
        number = len(self._parts) + 1
        response = self._call("upload a part of", "upload_part", PartNumber=number, Body=data)
        self._parts.append({"PartNumber": number, "ETag": response["ETag"]})
        self._size += len(data)

    def complete(self) -> int:
        if not self._parts:
            self.upload_part(b"")  # S3 completes no upload without a part; one empty part is an empty file
        self._call("complete the upload of", "complete_multipart_upload", MultipartUpload={"Parts": self._parts})
        return self._size

    def abort(self) -> None:
        try:
            self._call("abort the upload of", "abort_multipart_upload")
        except StorageError as exc:
            if isinstance(exc.__cause__, ClientError) and _error_code(exc.__cause__) == "NoSuchUpload":
                return  # aborted already (a restart's abort_uploads, or a second abort)
            raise
