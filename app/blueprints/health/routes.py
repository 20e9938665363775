import hmac

from flask import Response, abort, current_app, jsonify, request

from app.blueprints.health import bp
from app.services.staff.health import check_all, readiness


@bp.get("/healthz")
def healthz():
    """Database, Redis and storage, each `ok` or the error; 503 when any is down."""
    checks = check_all()
    healthy = all(value == "ok" for value in checks.values())
    return jsonify(status="ok" if healthy else "degraded", checks=checks), 200 if healthy else 503


@bp.get("/readyz")
def readyz():
    """/healthz plus the migrations at head and the number of workers; 503 until all hold."""
    ready, checks = readiness()
    return jsonify(status="ready" if ready else "not_ready", checks=checks), 200 if ready else 503


@bp.get("/metrics")
def metrics():
    """Prometheus' text format, for a scraper holding METRICS_TOKEN as a bearer token.

    Without METRICS_TOKEN the endpoint does not exist (404), so nothing is exposed by default.
    """
    from app.observability.metrics import exposition
    from app.services.work.queue import work_queues

    settings = current_app.config["SETTINGS"]
    token = settings.metrics_token
    if not token:
        abort(404)
    offered = request.headers.get("Authorization", "")
    if not hmac.compare_digest(offered.encode(), f"Bearer {token}".encode()):
        return Response("A bearer token is required.\n", 401, {"WWW-Authenticate": "Bearer"})
    return Response(
        exposition(work_queues, settings.metrics_directory), mimetype="text/plain; version=0.0.4; charset=utf-8"
    )
