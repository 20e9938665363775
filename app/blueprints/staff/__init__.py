from flask import Blueprint

bp = Blueprint("staff", __name__, url_prefix="/staff")

from app.blueprints.staff import record_links, routes  # noqa: E402,F401
