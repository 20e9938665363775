"""WSGI entry point: `gunicorn wsgi:app` in production, `flask --app wsgi` for the CLI."""

from app import create_app

app = create_app()
