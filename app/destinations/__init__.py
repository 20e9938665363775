"""Customers' storage as delivery destinations (DESIGN section 8, seed 000).

- `open_destination(destination)`: the store for an `ExportDestination` (kind `s3`, `sftp` or `directory`;
  a bucket by role signs with the role's temporary credentials, assumed here each time),
  its stored path checked again with the form's rule (`app.domain.destinations.destination_rules`).
- `test_connection(destination)`: write, read back and delete a probe object; the store's own
  error when that fails (with an SFTP server's host key when it is not the pinned one). For a
  webhook or Slack destination, send a test message and say how the receiver answered.
- `announce(destination, file_ready)`: tell a webhook or Slack destination (ANNOUNCING_KINDS) that
  a schedule's file is ready (webhook.py signs the message, slack.py writes it for a channel);
  `announce_package(destination, package_ready)` the same for a workspace package.
- `classify_error(exc)`: whether a failed transfer is worth retrying (transient) or not
  (permanent), with a short code and a bounded summary for the delivery's record.
- `refuse_internal_endpoint(url, allowed_hosts)`: the endpoint rule (endpoint_rule.py), for the
  form; opening a store applies it too, and the store's connections apply it again.

No message built here repeats what a store sent back beyond its error code: a person reads the
code and a sentence of ours, never the store's own message or body (an internal service behind a
misconfigured endpoint would otherwise be read through it), nor an exception's class name. The
destination's secret is in none of them.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import re
import secrets
import socket
from datetime import UTC, datetime

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
    SSLError,
)
from flask import current_app

from app.destinations import slack, webhook
from app.destinations.base import (
    S3_CONNECT_TIMEOUT_SECONDS,
    DeliveryFailure,
    DestinationRefused,
    DestinationStore,
    DestinationUnavailable,
    FileReady,
    PackageReady,
    ProbeResult,
    VolumeFacts,
    bounded,
)
from app.destinations.endpoint_rule import ENDPOINT_REFUSED, refuse_internal_endpoint, refuse_internal_host
from app.destinations.http_message import status_words
from app.domain.destinations.destination_rules import validate_destination_path
from app.domain.errors import ValidationError
from app.models.export_destination import ANNOUNCING_KINDS, DestinationKind, ExportDestination, S3Access, SftpLogin
from app.models.package_delivery import FAILURE_CODE_LIMIT, FailureClass
from app.security.credentials import CredentialsUnreadable, decrypt_secret
from app.storage.base import InvalidKey, ObjectMissing, StorageError

log = logging.getLogger(__name__)

# The sentence for an error nothing above explains; whoever shows it logs the error with its record.
UNEXPECTED_ERROR = "An unexpected error stopped the transfer; the server's log has the details."

__all__ = [
    "DeliveryFailure",
    "DestinationRefused",
    "DestinationStore",
    "DestinationUnavailable",
    "ENDPOINT_REFUSED",
    "FileReady",
    "UNEXPECTED_ERROR",
    "ProbeResult",
    "PackageReady",
    "VolumeFacts",
    "announce",
    "announce_package",
    "classify_error",
    "describe_error",
    "open_destination",
    "refuse_internal_endpoint",
    "test_connection",
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

        if not destination.bucket:
            raise DestinationRefused("The bucket destination is missing its bucket.", "incomplete")
        # Checked before any request for a clear refusal; the client's connections check again.
        refuse_internal_endpoint(destination.endpoint_url, settings.destination_allowed_hosts)
        if destination.s3_access == S3Access.ROLE:
            credentials = _role_credentials(destination, settings)
            client = make_client(
                region=destination.region,
                endpoint_url=destination.endpoint_url,
                access_key_id=credentials.access_key_id,
                secret=credentials.secret,
                session_token=credentials.session_token,
                allowed_hosts=settings.destination_allowed_hosts,
            )
        elif destination.access_key_id and destination.secret_ciphertext:
            client = make_client(
                region=destination.region,
                endpoint_url=destination.endpoint_url,
                access_key_id=destination.access_key_id,
                secret=decrypt_secret(destination.secret_ciphertext),
                allowed_hosts=settings.destination_allowed_hosts,
            )
        else:
            raise DestinationRefused("The bucket destination is missing its credentials.", "incomplete")
        return S3Destination(bucket=destination.bucket, path=path, part_size=settings.storage_part_size, client=client)
    if destination.kind == DestinationKind.DIRECTORY:
        from app.destinations.directory import DirectoryDestination

        return DirectoryDestination(root=settings.destinations_root, path=path)
    if destination.kind in ANNOUNCING_KINDS:
        raise DestinationRefused(
            "A webhook or Slack destination is told when a file is ready; files are not copied to it.", "not_a_store"
        )
    if destination.kind == DestinationKind.SFTP:
        from app.destinations.sftp import SftpDestination

        if (
            not destination.host
            or not destination.port
            or not destination.username
            or not destination.secret_ciphertext
        ):
            raise DestinationRefused("The SFTP destination is missing its server, user or credentials.", "incomplete")
        refuse_internal_host(destination.host, destination.port, settings.destination_allowed_hosts)
        secret = decrypt_secret(destination.secret_ciphertext)
        by_key = destination.sftp_login == SftpLogin.PRIVATE_KEY
        return SftpDestination(
            host=destination.host,
            port=destination.port,
            username=destination.username,
            password=None if by_key else secret,
            private_key=secret if by_key else None,
            host_key=destination.host_key,
            path=path,
            allowed_hosts=settings.destination_allowed_hosts,
        )
    raise DestinationRefused(f"Unknown destination kind {destination.kind!r}.", "unknown_kind")


def _role_credentials(destination: ExportDestination, settings):
    """The customer's role assumed for this delivery or test (app/destinations/s3_role.py)."""
    from app.destinations.s3_role import assume_role

    external_id = destination.workspace.aws_external_id
    if not settings.aws_delivery_principal_arn:
        raise DestinationRefused(
            "S3 destinations by role are not available on this installation (it has no AWS principal for roles "
            "to trust).",
            "role_unavailable",
        )
    if not destination.role_arn or not external_id:
        raise DestinationRefused("The bucket destination is missing its role or external id.", "incomplete")
    return assume_role(
        role_arn=destination.role_arn,
        external_id=external_id,
        workspace_id=destination.workspace_id,
        region=destination.region,
        sts_endpoint_url=settings.sts_endpoint_url,
    )


def test_connection(destination: ExportDestination) -> ProbeResult:
    """Write a small probe object under the destination's path, read it back, delete it.

    `ok` is true only when all three worked and the bytes read are the bytes written; otherwise
    the message is the store's error code with a sentence saying what it means (“AccessDenied: …”,
    “NoSuchBucket: …”, a refused connection) for the administrator to act on.
    """
    if destination.kind in ANNOUNCING_KINDS:
        return _test_message(destination)
    probe_key = f".rhythm-probe-{secrets.token_hex(8)}"
    payload = b"Rhythm Exports connection test " + secrets.token_hex(8).encode("ascii")
    try:
        store = open_destination(destination)
    except Exception as exc:  # any failure is the answer to the test, described for a person
        return _failed_probe(destination, exc)
    try:
        store.put_bytes(probe_key, payload)
    except Exception as exc:
        store.close()
        return _failed_probe(destination, exc)
    try:
        read_back = store.read_bytes(probe_key)
        store.delete(probe_key)
    except Exception as exc:
        with contextlib.suppress(Exception):  # leave no probe behind if the store lets us delete it
            store.delete(probe_key)
        return _failed_probe(destination, exc)
    finally:
        store.close()
    if read_back != payload:
        return ProbeResult(False, "The probe object read back differs from the one written.")
    return ProbeResult(True, f"Wrote, read back and deleted a test object in {store.location()}.")


def _failed_probe(destination: ExportDestination, exc: Exception) -> ProbeResult:
    message = describe_error(exc)
    if message == UNEXPECTED_ERROR:
        # The sentence sends the administrator to the log: the details are there, under the record.
        log.error("export_destination %s: Test connection failed unexpectedly", destination.id, exc_info=exc)
    # An SFTP server's key that is not the pinned one is shown, for the administrator to pin.
    return ProbeResult(False, message, getattr(exc, "offered_host_key", None))


def announce(destination: ExportDestination, file_ready: FileReady) -> None:
    """Tell a webhook or Slack destination that a schedule's file is ready. DestinationRefused
    (permanent) or DestinationUnavailable (transient) when the receiver does not take it, for
    `classify_error`; CredentialsUnreadable for a secret stored under another key."""
    _send(destination, webhook.file_ready_message(file_ready), slack.file_ready_message(file_ready))


def announce_package(destination: ExportDestination, package_ready: PackageReady) -> None:
    """Tell a webhook or Slack destination that a workspace package is ready, as `announce` does."""
    _send(destination, webhook.package_ready_message(package_ready), slack.package_ready_message(package_ready))


def _send(destination: ExportDestination, webhook_message: dict, slack_message: dict) -> int:
    """Send the kind's message to the destination's receiver; its 2xx status."""
    allowed_hosts = current_app.config["SETTINGS"].destination_allowed_hosts
    if not destination.secret_ciphertext:
        raise DestinationRefused("The destination is missing its secret.", "incomplete")
    if destination.kind == DestinationKind.WEBHOOK and destination.url:
        secret = decrypt_secret(destination.secret_ciphertext)
        return webhook.send(destination.url, secret, webhook_message, allowed_hosts=allowed_hosts)
    if destination.kind == DestinationKind.SLACK:
        url = decrypt_secret(destination.secret_ciphertext)
        return slack.send(url, slack_message, allowed_hosts=allowed_hosts)
    raise DestinationRefused("The destination does not receive messages.", "not_announcing")


def _test_message(destination: ExportDestination) -> ProbeResult:
    now = datetime.now(UTC)
    try:
        status = _send(destination, webhook.test_message(f"test-{secrets.token_hex(8)}", now), slack.test_message(now))
    except Exception as exc:  # any failure is the answer to the test, described for a person
        return _failed_probe(destination, exc)
    answer = status_words(status)
    if destination.kind == DestinationKind.SLACK:
        return ProbeResult(True, f"Slack accepted a test message ({answer}); it shows in the channel.")
    return ProbeResult(True, f"The webhook answered {answer} to a signed test message.")


# Its name starts with "test": keep pytest from collecting it where a test module imports it.
test_connection.__test__ = False  # type: ignore[attr-defined]


# A store's error code is shown only when it looks like one (S3 codes are short CamelCase words);
# anything else an endpoint sends there is its own text, and is not repeated.
_ERROR_CODE = re.compile(r"[A-Za-z][A-Za-z0-9.]{0,59}")
_REGION_MISMATCH = "the bucket is in another region: set the destination's region to the bucket's."
_BUSY = "the store is busy or unavailable; a later attempt may work."
# What the store's error codes mean, for the person who set the destination up.
_CODE_SENTENCES = {
    "SignatureDoesNotMatch": "the secret access key does not match the access key ID.",
    "InvalidAccessKeyId": "the store does not know this access key ID.",
    "AccessDenied": "these credentials may not write, read or delete objects in this bucket and path.",
    "AllAccessDisabled": "all access to this bucket has been disabled by its owner.",
    "AccountProblem": "the store reports a problem with the account that owns these credentials.",
    "NoSuchBucket": "no bucket of this name exists at this endpoint.",
    "InvalidBucketName": "the store does not accept this bucket name.",
    "PermanentRedirect": _REGION_MISMATCH,
    "AuthorizationHeaderMalformed": _REGION_MISMATCH,
    "IllegalLocationConstraintException": _REGION_MISMATCH,
    "RequestTimeTooSkewed": "this server's clock and the store's differ too much.",
    "ExpiredToken": "the credentials have expired.",
    "InvalidToken": "the credentials are not valid.",
    "QuotaExceeded": "the bucket's quota is used up.",
    "EntityTooLarge": "the store refused an object this large.",
    "KMS.DisabledException": "the bucket's encryption key is disabled.",
    "NotImplemented": "the store does not support a request the delivery makes.",
}
_STATUS_SENTENCES = {
    400: "the store refused the request as malformed.",
    401: "the store refused the credentials.",
    403: "access is denied to these credentials.",
    404: "the store answered “not found”: check the endpoint and the bucket name.",
    405: "the endpoint does not accept S3 requests; check it is an S3-compatible store.",
}


def _root_os_error(exc: BaseException) -> OSError | None:
    """The operating-system error under a network failure (connection refused, no route, …)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno is not None:
            return current
        pending.extend([current.__cause__, current.__context__])
        kwargs = getattr(current, "kwargs", None)
        if isinstance(kwargs, dict) and isinstance(kwargs.get("error"), BaseException):
            pending.append(kwargs["error"])
    return None


def _client_error(exc: ClientError) -> tuple[str, int | None]:
    """The store's error code (or `HTTP <status>` when it sent none we repeat) and the HTTP status."""
    error = exc.response.get("Error", {})
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    status = status if isinstance(status, int) else None
    code = str(error.get("Code") or "")
    if code.isdigit() or not _ERROR_CODE.fullmatch(code):  # HEAD answers carry a bare status as the code
        code = f"HTTP {status}" if status is not None else "Unknown"
    return code, status


def _client_error_sentence(code: str, status: int | None) -> str:
    if code in _CODE_SENTENCES:
        return _CODE_SENTENCES[code]
    if status is not None and 300 <= status < 400:
        return "the endpoint answered with a redirect, which is not followed; enter the store's own address."
    if code in _TRANSIENT_CODES or (status is not None and (status >= 500 or status in (408, 429))):
        return _BUSY
    if status in _STATUS_SENTENCES:
        return _STATUS_SENTENCES[status]
    return f"the store refused the request (HTTP status {status or 'unknown'})."


def _connection_sentence(exc: BaseException) -> str:
    if isinstance(exc, ConnectTimeoutError):
        return f"The endpoint did not answer within {S3_CONNECT_TIMEOUT_SECONDS} seconds."
    if isinstance(exc, ReadTimeoutError):
        return "The store stopped answering in the middle of a request."
    if isinstance(exc, SSLError):
        return "The endpoint's TLS certificate could not be verified, or it does not speak HTTPS."
    if isinstance(exc, ConnectionClosedError):
        return "The endpoint closed the connection before answering; check it is an S3-compatible store."
    reason = _root_os_error(exc)
    if isinstance(reason, socket.gaierror):
        return "The endpoint's server name could not be found."
    if isinstance(reason, ConnectionRefusedError):
        return "The endpoint refused the connection: nothing accepts connections at that address and port."
    if isinstance(exc, EndpointConnectionError):
        return "The endpoint could not be reached."
    if isinstance(exc, NoCredentialsError):
        return "The destination has no credentials to sign its requests with."
    return "The endpoint's answer could not be read as an S3 store's answer."


def _connection_refusal(exc: BaseException) -> DestinationRefused | None:
    """The endpoint rule's refusal at connection time, which botocore wraps in its own error."""
    error = getattr(exc, "kwargs", {}).get("error") if isinstance(exc, BotoCoreError) else None
    return error if isinstance(error, DestinationRefused) else None


def describe_error(exc: BaseException) -> str:
    """A bounded sentence for a person: the store's error code and what it means, or why the
    connection failed. Never the store's own message or body, an exception's class name,
    credentials, or a key of the product's own storage."""
    exc = _connection_refusal(exc) or exc
    if isinstance(exc, ClientError):
        code, status = _client_error(exc)
        return bounded(f"{code}: {_client_error_sentence(code, status)}")
    if isinstance(exc, BotoCoreError):
        return bounded(_connection_sentence(exc))
    if isinstance(exc, ObjectMissing):
        # The product's own storage keys are internal: the log has them, the customer never does.
        return "A file of the package is missing from Rhythm's storage, so the package cannot be copied."
    if isinstance(exc, InvalidKey):
        return "A file of the package is recorded under a name Rhythm refuses to read, so it cannot be copied."
    if isinstance(exc, StorageError):
        return "Rhythm's own storage could not be read just now; the copy is tried again later."
    if isinstance(exc, (DestinationRefused, DestinationUnavailable, CredentialsUnreadable)):
        return bounded(str(exc))
    if isinstance(exc, OSError):  # a directory destination: the system's reason, and which file
        reason = exc.strerror or "The directory could not be written"
        return bounded(f"{reason}: {exc.filename}" if exc.filename else reason)
    return UNEXPECTED_ERROR


def classify_error(exc: BaseException) -> DeliveryFailure:
    """Whether a failed transfer is transient (retried with backoff) or permanent (stops and
    notifies), with a short code and a bounded summary."""
    exc = _connection_refusal(exc) or exc
    summary = describe_error(exc)

    def failure(failure_class: FailureClass, code: str) -> DeliveryFailure:
        return DeliveryFailure(str(failure_class), code[:FAILURE_CODE_LIMIT], summary)

    if isinstance(exc, ClientError):
        code, status = _client_error(exc)
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
    if isinstance(exc, DestinationUnavailable):
        return failure(FailureClass.TRANSIENT, exc.code)
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
