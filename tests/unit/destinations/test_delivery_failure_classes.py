"""Which failures a delivery retries (transient) and which stop it (permanent)."""

from __future__ import annotations

import errno

import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError

from app.destinations import DestinationRefused, classify_error
from app.models.package_delivery import FailureClass
from app.models.types import SUMMARY_LIMIT
from app.security.credentials import CredentialsUnreadable
from app.storage.base import ObjectMissing


def _client_error(code: str, status: int, message: str = "The store said no.") -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject"
    )


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("SlowDown", 503),
        ("Throttling", 400),
        ("RequestTimeout", 400),
        ("InternalError", 500),
        ("BadGateway", 502),
        ("TooManyRequests", 429),
    ],
)
def test_throttling_timeouts_and_server_errors_are_transient(code, status):
    failure = classify_error(_client_error(code, status))
    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT, code)


@pytest.mark.parametrize(
    ("code", "status"),
    [("AccessDenied", 403), ("InvalidAccessKeyId", 403), ("SignatureDoesNotMatch", 403), ("NoSuchBucket", 404)],
)
def test_refusals_of_the_store_are_permanent(code, status):
    failure = classify_error(_client_error(code, status, "Go away."))
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, code)


@pytest.mark.parametrize(
    "exc",
    [
        EndpointConnectionError(endpoint_url="http://127.0.0.1:1"),
        ConnectTimeoutError(endpoint_url="http://127.0.0.1:1"),
        ReadTimeoutError(endpoint_url="http://127.0.0.1:1"),
        TimeoutError("timed out"),
        OSError(errno.ENOSPC, "No space left on device"),
    ],
)
def test_network_and_capacity_failures_are_transient(exc):
    assert classify_error(exc).failure_class == FailureClass.TRANSIENT


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (CredentialsUnreadable("The stored secret cannot be read."), "credentials_unreadable"),
        (DestinationRefused("No root.", "directory_not_configured"), "directory_not_configured"),
        (PermissionError(errno.EACCES, "Permission denied"), "directory_refused"),
        (ObjectMissing("no stored object"), "package_missing"),
    ],
)
def test_configuration_and_permission_failures_are_permanent(exc, code):
    failure = classify_error(exc)
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, code)


def test_the_summary_is_bounded():
    failure = classify_error(_client_error("AccessDenied", 403, "x" * 5000))
    assert len(failure.summary) <= SUMMARY_LIMIT
