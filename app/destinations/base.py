"""What every destination kind shares: the store interface, the probe and failure results and the
refusal error. The rules for a destination's path and endpoint are app/domain/workspace_export/destination_rules.py.

A destination store writes objects under the destination's path; callers name them with keys
relative to that path (checked by `check_key`, so they cannot climb out of it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

from app.domain.errors import Conflict
from app.models.types import SUMMARY_LIMIT

# How long an S3 endpoint has to accept a connection (app/destinations/s3.py), here so that the
# sentence describing a timeout names it without loading boto3.
S3_CONNECT_TIMEOUT_SECONDS = 5


class DestinationRefused(Conflict):
    """The destination cannot be used as configured (a directory destination with no root, or a
    path resolving outside it). Permanent: retrying changes nothing until someone fixes it."""

    def __init__(self, message: str, code: str = "destination_refused"):
        super().__init__(message)
        self.code = code


class DestinationUnavailable(Conflict):
    """The destination's server is down, unreachable or failing for now (said in people's words
    where the kind's client raised it). Transient: a later attempt may work."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    message: str
    # An SFTP server's host key ("<type> <base64>") when it is not the pinned one, to show and pin.
    offered_host_key: str | None = None


@dataclass(frozen=True)
class DeliveryFailure:
    failure_class: str  # FailureClass
    code: str
    summary: str


class DestinationStore(ABC):
    """Objects under one destination's path; `relative_key` is relative to that path."""

    @abstractmethod
    def put_stream(self, relative_key: str, chunks: Iterable[bytes]) -> int:
        """Store the object whole from `chunks` (memory holds at most one part); returns its size."""

    @abstractmethod
    def put_bytes(self, relative_key: str, data: bytes) -> None: ...

    @abstractmethod
    def read_bytes(self, relative_key: str) -> bytes: ...

    @abstractmethod
    def delete(self, relative_key: str) -> None: ...

    @abstractmethod
    def location(self, relative_key: str = "") -> str:
        """Where the object is (or the destination's top, for ""), for people to read."""

    def close(self) -> None:  # noqa: B027 - only a kind that holds a connection has one to end
        """End the store's connection, if it holds one."""


def bounded(text: str, limit: int = SUMMARY_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
