from flask import Blueprint

bp = Blueprint("delivery", __name__)

from app.blueprints.delivery import routes  # noqa: E402,F401
