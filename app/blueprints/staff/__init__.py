from flask import Blueprint

bp = Blueprint("staff", __name__, url_prefix="/staff")

from app.blueprints.staff import routes  # noqa: E402,F401
