from flask import Blueprint

bp = Blueprint("queries", __name__, url_prefix="/w/<int:workspace_id>/queries")

from app.blueprints.queries import routes  # noqa: E402,F401
