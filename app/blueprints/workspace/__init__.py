from flask import Blueprint

bp = Blueprint("workspace", __name__)

from app.blueprints.workspace import routes  # noqa: E402,F401
