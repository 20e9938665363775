from flask import Blueprint

bp = Blueprint("reports", __name__, url_prefix="/w/<int:workspace_id>/reports")

from app.blueprints.reports import routes  # noqa: E402,F401
