"""Sending one JSON message to a receiver's URL (a webhook's, or a Slack incoming webhook's): the
one HTTP client message destinations use.

Every send checks the URL again with the form's rule (HTTPS, plain http only for a host
DESTINATION_ALLOWED_HOSTS names) and connects through the endpoint rule (`guarded_pool`), so a
row written around the form, or a name that resolves elsewhere later, reaches no address on the
server's own network. A redirect is not followed: it is a refusal. Each send is bounded
(CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS) and tried once; the delivery's own backoff decides
when to try again.

The answer is turned into DestinationRefused (permanent: a 4xx other than 408 and 429, a
redirect, a refused URL) or DestinationUnavailable (transient: a timeout, a refused or dropped
connection, a name that does not resolve, a TLS failure, 408, 429 and 5xx), each with a sentence
for people. What the receiver sent back (its body, a redirect's Location) is never repeated.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from urllib.parse import urlsplit

from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NameResolutionError,
    NewConnectionError,
    ReadTimeoutError,
    SSLError,
)
from urllib3.util import Timeout

from app.destinations.base import DestinationRefused, DestinationUnavailable
from app.destinations.endpoint_rule import guarded_pool, refuse_internal_host
from app.domain.destinations.destination_rules import validate_message_url
from app.domain.errors import ValidationError

CONNECT_TIMEOUT_SECONDS = 5
# How long the receiver may take to answer once connected: it is meant to acknowledge and work later.
READ_TIMEOUT_SECONDS = 10


class _WithoutRequestLines(logging.Filter):
    """urllib3's debug lines name each request's path, and a Slack incoming webhook's path is its
    secret: they are dropped, whatever level a process logs at."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.DEBUG


logging.getLogger("urllib3.connectionpool").addFilter(_WithoutRequestLines())


def post_json(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    what: str,
    allowed_hosts: frozenset[str],
    status_sentences: dict[int, str] | None = None,
) -> int:
    """POST `body` (JSON) to `url`; the 2xx status on success. `what` names the receiver in the
    sentences ("The webhook"); `status_sentences` says what a receiver's 4xx statuses mean."""
    try:
        validate_message_url(url, "url", f"{what}'s URL", allowed_hosts)
    except ValidationError as exc:
        raise DestinationRefused(str(exc), "invalid_url") from None
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    refuse_internal_host(host, port, allowed_hosts)  # a clear refusal before any connection
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    timeout = Timeout(connect=CONNECT_TIMEOUT_SECONDS, read=READ_TIMEOUT_SECONDS)
    pool = guarded_pool(parts.scheme, host, port, allowed_hosts, timeout)
    try:
        response = pool.urlopen(
            "POST",
            target,
            body=body,
            headers={"Content-Type": "application/json", "User-Agent": "Rhythm-Exports", **headers},
            retries=False,
            redirect=False,
            # Only the status is read: a receiver's body, however long, is never taken in.
            preload_content=False,
        )
        status = response.status
        response.close()
    except HTTPError as exc:
        raise _connection_failure(what, exc) from None
    finally:
        pool.close()
    return _judged(what, status, status_sentences or {})


def _judged(what: str, status: int, status_sentences: dict[int, str]) -> int:
    if 200 <= status < 300:
        return status
    answer = status_words(status)
    if 300 <= status < 400:
        raise DestinationRefused(
            f"{what} answered with a redirect ({answer}), which is not followed; enter the address it redirects to.",
            "redirect",
        )
    if status >= 500 or status in (408, 429):
        raise DestinationUnavailable(
            f"{what} answered {answer}: it is busy or failing; a later attempt may work.", f"http_{status}"
        )
    meaning = status_sentences.get(status, "it refused the message; check its URL and its settings.")
    raise DestinationRefused(f"{what} answered {answer}: {meaning}", f"http_{status}")


def status_words(status: int) -> str:
    """An HTTP status as people read it: "HTTP 410 Gone" ("HTTP 299" for a status with no name)."""
    try:
        return f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def _connection_failure(what: str, exc: HTTPError) -> DestinationUnavailable:
    # urllib3's NewConnectionError (and its NameResolutionError) are kinds of ConnectTimeoutError.
    if isinstance(exc, NameResolutionError):
        return DestinationUnavailable(f"{what}'s server name could not be found.", "name_not_found")
    if isinstance(exc, NewConnectionError):
        if isinstance(exc.__cause__, ConnectionRefusedError):
            return DestinationUnavailable(
                f"{what} refused the connection: nothing accepts connections at that address and port.",
                "connection_refused",
            )
        return DestinationUnavailable(f"{what} could not be reached.", "connection_failed")
    if isinstance(exc, ConnectTimeoutError):
        return DestinationUnavailable(f"{what} did not answer within {CONNECT_TIMEOUT_SECONDS} seconds.", "timeout")
    if isinstance(exc, ReadTimeoutError):
        return DestinationUnavailable(
            f"{what} accepted the connection but did not answer within {READ_TIMEOUT_SECONDS} seconds.", "timeout"
        )
    if isinstance(exc, SSLError):
        return DestinationUnavailable(
            f"{what}'s TLS certificate could not be verified, or it does not speak HTTPS.", "tls_failed"
        )
    return DestinationUnavailable(f"{what} closed the connection before answering.", "connection_failed")
