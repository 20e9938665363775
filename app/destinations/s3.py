"""An S3 bucket (AWS or any S3-compatible store) as a delivery destination.

The client fails fast: short connect and read timeouts and a small retry budget, so a dead
endpoint ends an attempt in seconds and the delivery's own backoff (app/services/workspace_export/package_delivery.py)
decides when to try again. It follows no redirect (botocore would otherwise chase an S3 "wrong
region" answer, and a hostile endpoint's 307 loops until the stack runs out), and connects only
where the endpoint rule (app/destinations/endpoint_rule.py) allows. Large objects go up as
multipart uploads of `part_size` bytes taken from the stream, so memory holds one part whatever
the object's size.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from app.destinations.base import S3_CONNECT_TIMEOUT_SECONDS, DestinationStore
from app.destinations.endpoint_rule import guard_client
from app.storage.base import check_key

READ_TIMEOUT_SECONDS = 30
# Attempts per request, the first included; the delivery's backoff handles longer outages.
MAX_ATTEMPTS = 2


def make_client(
    *,
    region: str | None,
    endpoint_url: str | None,
    access_key_id: str,
    secret: str,
    allowed_hosts: frozenset[str],
    session_token: str | None = None,
):
    """A client signing with this key (and, for a role's temporary credentials, its session token)."""
    config = Config(
        connect_timeout=S3_CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
        retries={"max_attempts": MAX_ATTEMPTS, "mode": "standard"},
        # S3-compatible servers rarely answer bucket subdomains; AWS answers both styles.
        s3={"addressing_style": "path" if endpoint_url else "auto"},
    )
    client = boto3.client(
        "s3",
        region_name=region or "us-east-1",
        endpoint_url=endpoint_url or None,
        aws_access_key_id=access_key_id,
        aws_secret_access_key=secret,
        aws_session_token=session_token,
        config=config,
    )
    guard_client(client, allowed_hosts)
    client.meta.events.register_last("before-parameter-build.s3", _follow_no_redirect)
    return client


def _follow_no_redirect(context, **_):
    """Mark every request as already redirected: botocore's region redirector then leaves it alone."""
    redirect = context.get("s3_redirect")
    if isinstance(redirect, dict):
        redirect["redirected"] = True


class S3Destination(DestinationStore):
    def __init__(self, *, bucket: str, path: str, part_size: int, client):
        self.bucket = bucket
        self.path = path.strip("/")
        self.part_size = part_size
        self.client = client

    def _full_key(self, relative_key: str) -> str:
        check_key(relative_key)
        return f"{self.path}/{relative_key}" if self.path else relative_key

    def location(self, relative_key: str = "") -> str:
        if not relative_key:
            return f"s3://{self.bucket}/{self.path}" if self.path else f"s3://{self.bucket}"
        return f"s3://{self.bucket}/{self._full_key(relative_key)}"

    def put_bytes(self, relative_key: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self._full_key(relative_key), Body=data)

    def put_stream(self, relative_key: str, chunks: Iterable[bytes]) -> int:
        """One PUT when the whole object fits in a part; otherwise a multipart upload, aborted on
        any failure so no unfinished upload is left in the customer's bucket."""
        key = self._full_key(relative_key)
        buffer = bytearray()
        iterator = iter(chunks)
        for chunk in iterator:
            buffer += chunk
            if len(buffer) >= self.part_size:
                return self._multipart(key, buffer, iterator)
        self.client.put_object(Bucket=self.bucket, Key=key, Body=bytes(buffer))
        return len(buffer)

    def _multipart(self, key: str, buffer: bytearray, rest: Iterable[bytes]) -> int:
        upload_id = self.client.create_multipart_upload(Bucket=self.bucket, Key=key)["UploadId"]
        parts: list[dict] = []
        size = 0

        def send(part: bytes) -> None:
            nonlocal size
            number = len(parts) + 1
            response = self.client.upload_part(
                Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=part
            )
            parts.append({"PartNumber": number, "ETag": response["ETag"]})
            size += len(part)

        try:
            for chunk in itertools.chain([b""], rest):  # the buffer may already hold parts
                buffer += chunk
                while len(buffer) >= self.part_size:
                    with memoryview(buffer) as view:
                        part = bytes(view[: self.part_size])
                    send(part)
                    del buffer[: self.part_size]
            if buffer:
                send(bytes(buffer))
            self.client.complete_multipart_upload(
                Bucket=self.bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
            )
        except BaseException:
            # The transfer's own failure is the one to report, not a failed clean-up.
            with contextlib.suppress(ClientError, BotoCoreError):
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id)
            raise
        return size

    def read_bytes(self, relative_key: str) -> bytes:
        body = self.client.get_object(Bucket=self.bucket, Key=self._full_key(relative_key))["Body"]
        try:
            return body.read()
        finally:
            body.close()

    def delete(self, relative_key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._full_key(relative_key))
