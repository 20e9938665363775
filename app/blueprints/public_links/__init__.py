from flask import Blueprint

bp = Blueprint("public_links", __name__)

from app.blueprints.public_links import routes  # noqa: E402,F401
