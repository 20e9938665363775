"""WSGI entry point: `gunicorn wsgi:app` in production (see gunicorn.conf.py), `flask --app wsgi`
for the CLI and the embedded web server."""

from app import create_app
from app.observability.logs import configure_logging

configure_logging("web")
app = create_app()
