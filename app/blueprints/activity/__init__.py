from flask import Blueprint

bp = Blueprint("activity", __name__, url_prefix="/w/<int:workspace_id>/activity")

from app.blueprints.activity import routes  # noqa: E402,F401
