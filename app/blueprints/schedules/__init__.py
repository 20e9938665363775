from flask import Blueprint

bp = Blueprint("schedules", __name__, url_prefix="/w/<int:workspace_id>/schedules")

from app.blueprints.schedules import routes  # noqa: E402,F401
