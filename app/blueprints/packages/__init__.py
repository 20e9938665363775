from flask import Blueprint

bp = Blueprint("packages", __name__, url_prefix="/w/<int:workspace_id>/export")

from app.blueprints.packages import routes  # noqa: E402,F401
