"""The application factory.

This module imports Flask and the extensions inside `create_app`, not at the top, so that
importing a submodule (a writer in `app.rendering`, say) does not load the web stack.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask


def create_app(overrides: dict | None = None) -> Flask:
    from flask import Flask

    from app.config import Settings
    from app.extensions import csrf, db, htmx, login_manager, migrate

    app = Flask(__name__, instance_relative_config=True)
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    settings = Settings.from_environment(Path(app.instance_path))
    app.config.from_mapping(settings.as_flask_config())
    if overrides:
        app.config.update(overrides)

    db.init_app(app)
    migrate.init_app(app, db, directory=str(Path(app.root_path).parent / "migrations"))
    login_manager.init_app(app)
    csrf.init_app(app)
    htmx.init_app(app)

    from app import models  # noqa: F401  (every table registered before migrations run)

    _register_blueprints(app)
    _register_cli(app)
    _register_template_helpers(app)
    return app


def _register_blueprints(app: Flask) -> None:
    from app.blueprints.auth import bp as auth_bp
    from app.blueprints.errors import register_error_pages
    from app.blueprints.files import bp as files_bp
    from app.blueprints.health import bp as health_bp
    from app.blueprints.queries import bp as queries_bp
    from app.blueprints.reports import bp as reports_bp
    from app.blueprints.workspace import bp as workspace_bp

    for blueprint in (auth_bp, health_bp, workspace_bp, queries_bp, reports_bp, files_bp):
        app.register_blueprint(blueprint)
    register_error_pages(app)


def _register_cli(app: Flask) -> None:
    from app.cli import register

    register(app)


def _register_template_helpers(app: Flask) -> None:
    from app.templating import register

    register(app)
