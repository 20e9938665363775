from flask import Blueprint

bp = Blueprint("templates", __name__, url_prefix="/w/<int:workspace_id>/templates")

from app.blueprints.templates import routes  # noqa: E402,F401
