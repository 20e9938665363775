"""Customers' storage as delivery destinations (DESIGN section 8, seed 000).

- `open_destination(destination)`: the store for an `ExportDestination` (kind `s3` or `directory`).
- `test_connection(destination)`: write, read back and delete a probe object; the store's own
  error when that fails.
- `classify_error(exc)`: whether a failed transfer is worth retrying (transient) or not
  (permanent), with a short code and a bounded summary for the delivery's record.
- `validate_destination_path(path)`, `validate_endpoint_url(url)`: input checks for the forms.

No message built here contains the destination's secret: errors are described from the store's
error code and message, never from the request that carried the credentials.
"""

from __future__ import annotations

import contextlib
import errno
import secrets

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from flask import current_app

from app.destinations.base import (
    DeliveryFailure,
    DestinationRefused,
    DestinationStore,
    ProbeResult,
    bounded,
    validate_destination_path,
    validate_endpoint_url,
)
from app.domain.errors import ValidationError
from app.models.workspace_export import DestinationKind, ExportDestination, FailureClass
from app.security.credentials import CredentialsUnreadable, decrypt_secret
from app.storage.base import InvalidKey, ObjectMissing, StorageError

__all__ = [
    "DeliveryFailure",
    "DestinationRefused",
    "DestinationStore",
    "ProbeResult",
    "classify_error",
    "describe_error",
    "open_destination",
    "test_connection",
    "validate_destination_path",
    "validate_endpoint_url",
]

# S3 error codes that mean "try again later"; every other 4xx answer is permanent.
_TRANSIENT_CODES = {
    "SlowDown",
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottled",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "RequestTimeout",
    "RequestTimeTooSkewed",
    "InternalError",
    "ServiceUnavailable",
    "OperationAborted",
}
# Operating-system errors of a directory destination that no retry will cure.
_PERMANENT_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG}
_CODE_LIMIT = 60


def open_destination(destination: ExportDestination) -> DestinationStore:
    """The store for the destination. Raises DestinationRefused (a directory destination the
    server does not allow) or CredentialsUnreadable (a secret stored under another key)."""
    settings = current_app.config["SETTINGS"]
    try:  # checked again here: a row written around the form must not steer writes either
        path = validate_destination_path(destination.path)
    except ValidationError as exc:
        raise DestinationRefused(str(exc), "invalid_path") from exc
    if destination.kind == DestinationKind.S3:
        from app.destinations.s3 import S3Destination, make_client

        if not destination.bucket or not destination.access_key_id or not destination.secret_ciphertext:
            raise DestinationRefused("The bucket destination is missing its bucket or credentials.", "incomplete")
        client = make_client(
            region=destination.region,
            endpoint_url=destination.endpoint_url,
            access_key_id=destination.access_key_id,
            secret=decrypt_secret(destination.secret_ciphertext),
        )
        return S3Destination(bucket=destination.bucket, path=path, part_size=settings.storage_part_size, client=client)
    if destination.kind == DestinationKind.DIRECTORY:
        from app.destinations.directory import DirectoryDestination

        return DirectoryDestination(root=settings.destinations_root, path=path)
    raise DestinationRefused(f"Unknown destination kind {destination.kind!r}.", "unknown_kind")


def test_connection(destination: ExportDestination) -> ProbeResult:
    """Write a small probe object under the destination's path, read it back, delete it.

    `ok` is true only when all three worked and the bytes read are the bytes written; otherwise
    the message is the store's own error (“AccessDenied: …”, “NoSuchBucket: …”, a refused
    connection) for the administrator to act on.
    """
    probe_key = f".rhythm-probe-{secrets.token_hex(8)}"
    payload = b"Rhythm Exports connection test " + secrets.token_hex(8).encode("ascii")
    try:
        store = open_destination(destination)
        store.put_bytes(probe_key, payload)
    except Exception as exc:  # any failure is the answer to the test, described for a person
        return ProbeResult(False, describe_error(exc))
    try:
        read_back = store.read_bytes(probe_key)
        store.delete(probe_key)
    except Exception as exc:
        with contextlib.suppress(Exception):  # leave no probe behind if the store lets us delete it
            store.delete(probe_key)
        return ProbeResult(False, describe_error(exc))
    if read_back != payload:
        return ProbeResult(False, "The probe object read back differs from the one written.")
    return ProbeResult(True, f"Wrote, read back and deleted a test object in {store.location()}.")


# Its name starts with "test": keep pytest from collecting it where a test module imports it.
test_connection.__test__ = False  # type: ignore[attr-defined]


def _root_os_error(exc: BaseException) -> OSError | None:
    """The operating-system error under a network failure (connection refused, no route, …)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.strerror:
            return current
        pending.extend([current.__cause__, current.__context__])
        kwargs = getattr(current, "kwargs", None)
        if isinstance(kwargs, dict) and isinstance(kwargs.get("error"), BaseException):
            pending.append(kwargs["error"])
    return None


def _client_error(exc: ClientError) -> tuple[str, str, int | None]:
    error = exc.response.get("Error", {})
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    code = str(error.get("Code") or status or "ClientError")
    message = str(error.get("Message") or "")
    if not message:  # HEAD answers carry a bare status and no body
        message = {"403": "Access denied.", "404": "Not found."}.get(code, f"HTTP status {status}.")
    return code, message, status


def describe_error(exc: BaseException) -> str:
    """A bounded sentence for a person: the store's error code and message, or the reason the
    connection failed. Never includes credentials, nor a key of the product's own storage."""
    if isinstance(exc, ClientError):
        code, message, _ = _client_error(exc)
        return bounded(f"{code}: {message}")
    if isinstance(exc, BotoCoreError):
        reason = _root_os_error(exc)
        detail = f" ({reason.strerror})" if reason is not None else ""
        return bounded(f"{type(exc).__name__}: {exc}{detail}")
    if isinstance(exc, OSError):
        return bounded(f"{exc.strerror or type(exc).__name__}: {exc.filename or ''}".rstrip(": "))
    if isinstance(exc, ObjectMissing):
        # The product's own storage keys are internal: the log has them, the customer never does.
        return "A file of the package is missing from Rhythm's storage, so the package cannot be copied."
    if isinstance(exc, InvalidKey):
        return "A file of the package is recorded under a name Rhythm refuses to read, so it cannot be copied."
    if isinstance(exc, StorageError):
        return "Rhythm's own storage could not be read just now; the copy is tried again later."
    if isinstance(exc, (DestinationRefused, CredentialsUnreadable)):
        return bounded(str(exc))
    return bounded(f"{type(exc).__name__}: {exc}")


def classify_error(exc: BaseException) -> DeliveryFailure:
    """Whether a failed transfer is transient (retried with backoff) or permanent (stops and
    notifies), with a short code and a bounded summary."""
    summary = describe_error(exc)

    def failure(failure_class: FailureClass, code: str) -> DeliveryFailure:
        return DeliveryFailure(str(failure_class), code[:_CODE_LIMIT], summary)

    if isinstance(exc, ClientError):
        code, _, status = _client_error(exc)
        if code in _TRANSIENT_CODES or (status is not None and (status >= 500 or status in (408, 429))):
            return failure(FailureClass.TRANSIENT, code)
        return failure(FailureClass.PERMANENT, code)
    if isinstance(exc, (ConnectTimeoutError, ReadTimeoutError)):
        return failure(FailureClass.TRANSIENT, "timeout")
    if isinstance(exc, (EndpointConnectionError, ConnectionClosedError)):
        return failure(FailureClass.TRANSIENT, "connection_failed")
    if isinstance(exc, NoCredentialsError):
        return failure(FailureClass.PERMANENT, "no_credentials")
    if isinstance(exc, BotoCoreError):
        return failure(FailureClass.TRANSIENT, type(exc).__name__)
    if isinstance(exc, CredentialsUnreadable):
        return failure(FailureClass.PERMANENT, "credentials_unreadable")
    if isinstance(exc, DestinationRefused):
        return failure(FailureClass.PERMANENT, exc.code)
    if isinstance(exc, ObjectMissing):
        return failure(FailureClass.PERMANENT, "package_missing")
    if isinstance(exc, InvalidKey):
        return failure(FailureClass.PERMANENT, "invalid_key")
    if isinstance(exc, StorageError):  # the product's own storage, read as the source
        return failure(FailureClass.TRANSIENT, "source_unavailable")
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return failure(FailureClass.TRANSIENT, "connection_failed")
    if isinstance(exc, OSError):
        if exc.errno in _PERMANENT_ERRNOS:
            return failure(FailureClass.PERMANENT, "directory_refused")
        return failure(FailureClass.TRANSIENT, "directory_error")
    return failure(FailureClass.TRANSIENT, "unexpected_error")
