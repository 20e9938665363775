"""What every destination kind shares: the store interface, the probe and failure results, the
refusal error, and the file-ready and package-ready facts a webhook or Slack destination
announces. The rules for a destination's path, endpoint and URL are
app/domain/destinations/destination_rules.py.

A destination store writes objects under the destination's path; callers name them with keys
relative to that path (checked by `check_key`, so they cannot climb out of it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

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


@dataclass(frozen=True)
class FileReady:
    """A schedule's file, ready to download: what a message destination (webhook, Slack) is told.
    Facts about the file and a link to it, never its rows."""

    # Stable per (run, destination): the same on every retry, so a receiver can drop repeats.
    message_id: str
    schedule_name: str
    schedule_slug: str
    run_id: int
    occurrence: datetime  # UTC
    file_name: str
    format: str
    rows: int
    size_bytes: int
    sha256: str  # hex
    download_url: str
    link_expires_at: datetime


@dataclass(frozen=True)
class VolumeFacts:
    name: str  # its name inside the package, as a storage destination receives it
    rows: int
    size_bytes: int
    sha256: str  # hex


@dataclass(frozen=True)
class PackageReady:
    """A workspace package, ready on its page: what a message destination is told instead of
    receiving its files. Facts and a link to the package's page (where administrators download
    it), never data."""

    # Stable per (package, destination): the same on every retry.
    message_id: str
    workspace_name: str
    package_id: int
    cutoff_at: datetime  # UTC: the data is as it was then
    format: str
    rows: int
    size_bytes: int
    volumes: tuple[VolumeFacts, ...]
    package_url: str
    expires_at: datetime


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
