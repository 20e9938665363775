"""The application factory.

This module imports Flask and the extensions inside `create_app`, not at the top, so that
importing a submodule (a writer in `app.rendering`, say) does not load the web stack.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

    from app.config import Settings


def create_app(settings: Settings | None = None, *, pages: bool = True) -> Flask:
    """The app with these settings; without any, with those this process's environment gives.

    `pages=False` is the app a job runs in (jobs/app_context.py): the engines and the models
    without the web's pages, commands and page helpers, so a worker, and every job it forks, does
    not load each page's imports (every capability's services, the forms) whatever its job makes.
    """
    from flask import Flask

    from app.config import settings_of_this_process
    from app.extensions import csrf, db, htmx, login_manager

    if settings is None:
        settings = settings_of_this_process()
    app = Flask(__name__, instance_path=str(settings.instance_path), instance_relative_config=True)
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    app.config.from_mapping(settings.as_flask_config())

    db.init_app(app)
    login_manager.init_app(app)
    csrf.init_app(app)
    htmx.init_app(app)

    from app import models  # noqa: F401  (every table registered before migrations run)
    from app.services.work import queue

    queue.init_app(app)

    if pages:
        _register_migrations(app)
        _register_blueprints(app)
        _register_cli(app)
        _register_template_helpers(app)
        _register_request_guards(app)
    return app


# No inline scripts or styles, no eval, no framing, nothing fetched from elsewhere.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


# Sent only over HTTPS (browsers ignore it over HTTP, and a plain-HTTP `make run` must stay usable).
STRICT_TRANSPORT_SECURITY = "max-age=31536000; includeSubDomains"


def _register_request_guards(app: Flask) -> None:
    from flask import abort, g, request

    from app.observability import context

    @app.before_request
    def take_request_id() -> None:
        # Every log line of this request carries the id; a proxy's own X-Request-ID is kept.
        g.request_id = context.request_id_from(request.headers.get("X-Request-ID"))
        g.request_id_token = context.request_id.set(g.request_id)

    @app.teardown_request
    def drop_request_id(_exc) -> None:
        token = g.pop("request_id_token", None)
        if token is not None:
            context.request_id.reset(token)

    @app.before_request
    def refuse_oversized_bodies() -> None:
        # Werkzeug enforces MAX_CONTENT_LENGTH only when a route reads the body; refuse it up front.
        limit = app.config.get("MAX_CONTENT_LENGTH")
        if limit is not None and request.content_length is not None and request.content_length > limit:
            abort(413)

    @app.after_request
    def add_security_headers(response):
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if request.is_secure:
            response.headers.setdefault("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY)
        if "request_id" in g:
            response.headers["X-Request-ID"] = g.request_id
        return response


def _register_migrations(app: Flask) -> None:
    """`flask db …` and the schema checks (/readyz, start-up) run Alembic; a job never does, and
    Flask-Migrate with Alembic costs a process about 12 MB."""
    from flask_migrate import Migrate

    from app.extensions import db

    Migrate(app, db, directory=str(Path(app.root_path).parent / "migrations"))


def _register_blueprints(app: Flask) -> None:
    from app.blueprints import (
        activity,
        audit,
        auth,
        export_settings,
        files,
        health,
        packages,
        public_links,
        queries,
        reports,
        schedules,
        staff,
        templates,
        workspace,
    )
    from app.blueprints.errors import register_error_pages

    for pages in (
        auth,
        health,
        workspace,
        queries,
        reports,
        schedules,
        templates,
        files,
        public_links,
        staff,
        audit,
        activity,
        export_settings,
        packages,
    ):
        app.register_blueprint(pages.bp)
    register_error_pages(app)


def _register_cli(app: Flask) -> None:
    from app.cli import register

    register(app)


def _register_template_helpers(app: Flask) -> None:
    from app.templating import register

    register(app)
