from flask import Blueprint

bp = Blueprint("files", __name__, url_prefix="/w/<int:workspace_id>/files")

from app.blueprints.files import routes  # noqa: E402,F401
