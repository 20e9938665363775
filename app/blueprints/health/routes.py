from flask import jsonify

from app.blueprints.health import bp
from app.services.health import check_all


@bp.get("/healthz")
def healthz():
    """Database, Redis and storage, each `ok` or the error; 503 when any is down."""
    checks = check_all()
    healthy = all(value == "ok" for value in checks.values())
    return jsonify(status="ok" if healthy else "degraded", checks=checks), 200 if healthy else 503
