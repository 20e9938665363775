"""gunicorn settings for production: `gunicorn -c gunicorn.conf.py wsgi:app`.

Everything comes from the environment, so one file serves every machine:
  PORT (8000), WEB_BIND (0.0.0.0:$PORT), WEB_CONCURRENCY (worker processes, 2),
  WEB_THREADS (threads per worker, 4), WEB_TIMEOUT (seconds a request may take, 60),
  WEB_GRACEFUL_TIMEOUT (seconds to finish requests on restart or stop, 30),
  FORWARDED_ALLOW_IPS (proxies trusted for X-Forwarded-Proto, so HSTS and Secure cookies follow
  the TLS the proxy ended; 127.0.0.1).
Logs (errors and access) are JSON lines on stdout, like the app's own (app/observability).
With PROMETHEUS_MULTIPROC_DIR set, /metrics adds up every worker process (README "Metrics").
"""

import os

bind = os.environ.get("WEB_BIND") or f"0.0.0.0:{os.environ.get('PORT') or 8000}"
workers = int(os.environ.get("WEB_CONCURRENCY") or 2)
threads = int(os.environ.get("WEB_THREADS") or 4)
worker_class = "gthread"
timeout = int(os.environ.get("WEB_TIMEOUT") or 60)
graceful_timeout = int(os.environ.get("WEB_GRACEFUL_TIMEOUT") or 30)
keepalive = 5
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS") or "127.0.0.1"
accesslog = "-"
errorlog = "-"
logger_class = "app.observability.gunicorn_logging.JsonLogger"


def on_starting(server):
    """The master refuses settings the app refuses (keys missing on a shared database) before it
    boots workers, which would otherwise exit and be booted again without end."""
    from app.config import settings_of_this_process

    settings_of_this_process()


def child_exit(server, worker):
    """A worker process that ended leaves its metrics file; live gauges of it are dropped."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
