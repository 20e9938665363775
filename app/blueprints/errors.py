"""Error pages: a readable page for people, JSON-free and with no internals.

`ANSWERS` is the one map from the errors a person can cause (`app/domain/errors.py`) to what the
browser gets: a refusal a route does not show on its own page reaches these handlers. The page
says the error's sentence (never SQL, parameters or a stack trace: the sentences are written for
people); an htmx request gets a fragment with the sentence instead of a whole page. Whatever is
not visible, or not the person's to use, answers the plain 404 page. The log gets the error with
the request's path and the ids in its URL.

A database or Redis that cannot be reached answers 503 with a page of its own and `Retry-After`,
rendered straight from its template: no context processor runs, so nothing asks the database who
is signed in (which would fail again, leaving the server's bare "Internal Server Error").
"""

from __future__ import annotations

from flask import Flask, current_app, render_template, request
from flask_wtf.csrf import CSRFError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from app.domain.errors import (
    AccessDenied,
    Conflict,
    DomainError,
    NotVisible,
    TransitionRefused,
    ValidationError,
    ValidationErrors,
)
from app.domain.values.sizes import size_label
from app.extensions import db, htmx

# What a lost database or Redis raises: the connection refused or dropped, the pool exhausted.
SERVICE_OUTAGES = (OperationalError, InterfaceError, PoolTimeoutError, RedisConnectionError, RedisTimeoutError)
# How long a browser or a client is asked to wait before trying again.
RETRY_AFTER_SECONDS = 60

# Each category of DomainError and its HTTP status; a unit test fails for a DomainError outside them.
ANSWERS: dict[type[DomainError], int] = {
    ValidationError: 400,
    NotVisible: 404,
    AccessDenied: 404,
    TransitionRefused: 409,
    Conflict: 409,
}

MESSAGES = {
    400: ("Bad request", "The request could not be understood."),
    403: ("Not allowed", "You do not have access to this."),
    404: ("Not found", "There is nothing here, or you do not have access to it."),
    405: ("Not allowed", "That action is not available here."),
    409: ("Not possible now", "That cannot be done now. Reload the page to see how things stand."),
    410: ("Gone", "This is no longer available."),
    413: ("Too large", "The request is too large."),
    429: ("Slow down", "Too many requests. Try again in a moment."),
    500: ("Something went wrong", "The error was logged. Try again, or contact support."),
}


def _status_of(error: DomainError) -> int:
    """The status of `error`'s category."""
    return next(status for category, status in ANSWERS.items() if isinstance(error, category))


def register_error_pages(app: Flask) -> None:
    for code in MESSAGES:
        app.register_error_handler(code, lambda error, code=code: _page(code))

    @app.errorhandler(413)
    def too_large(error):
        limit = app.config.get("MAX_CONTENT_LENGTH")
        if not limit:
            return _page(413)
        # A limit is set in whole units: "1 MB", not "1.0 MB".
        size = size_label(limit).replace(".0 ", " ")
        return _page(413, f"The request is larger than {size}, the most this site accepts. Send less at once.")

    @app.errorhandler(CSRFError)
    def csrf_error(error: CSRFError):
        return _page(400, "The form expired or was sent from elsewhere. Reload the page and try again.")

    app.register_error_handler(DomainError, _refusal)
    for outage in SERVICE_OUTAGES:
        app.register_error_handler(outage, _unavailable)


def _refusal(error: DomainError):
    status = _status_of(error)
    current_app.logger.info(
        "%s %s answered %s: %s: %s (%s)",
        request.method,
        request.path,
        status,
        type(error).__name__,
        error,
        request.view_args or {},
    )
    if status == 404:
        # The same page as any address that names nothing: the sentence would say what exists.
        return _page(404)
    refusals = error.errors if isinstance(error, ValidationErrors) else (error,)
    if htmx:
        fragment = render_template("errors/_refusal.html", refusals=refusals)
        return fragment, status
    return _page(status, " ".join(str(refusal) for refusal in refusals))


def _unavailable(error: Exception):
    current_app.logger.error(
        "%s %s answered 503: a service is unreachable: %s: %s (%s)",
        request.method,
        request.path,
        type(error).__name__,
        error,
        request.view_args or {},
    )
    db.session.remove()  # the broken connection goes back to the pool to be discarded, not reused
    page = current_app.jinja_env.get_template("errors/unavailable.html").render()
    return page, 503, {"Retry-After": str(RETRY_AFTER_SECONDS)}


def _page(code: int, detail: str | None = None):
    title, message = MESSAGES[code]
    # An error page names no workspace: a 404 must not tell whose workspace the address is in.
    page = render_template("errors/error.html", code=code, title=title, message=detail or message, plain_header=True)
    return page, code
