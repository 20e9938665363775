from flask import Blueprint

bp = Blueprint("export_settings", __name__, url_prefix="/w/<int:workspace_id>/export")

from app.blueprints.export_settings import routes  # noqa: E402,F401
