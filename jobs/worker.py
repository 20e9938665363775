"""`python -m jobs.worker`: one RQ worker on the export queue named in the settings.

Start as many as needed, on any machine that reaches the same Redis, database and storage.
"""

from __future__ import annotations

import os
import socket

from rq import Worker

from app.observability.logs import configure_logging
from app.observability.metrics import PROCESS_VARIABLE
from app.services.queue import queue_connections
from jobs.app_context import worker_app


def main() -> None:
    configure_logging("worker")
    name = f"exports-{socket.gethostname()}-{os.getpid()}"
    # The work-horses this worker forks, one job at a time, share one metrics file (app/observability/metrics.py).
    os.environ[PROCESS_VARIABLE] = name
    connections = queue_connections(worker_app())
    # The app's own client: the worker and the jobs it runs share the app's connection pool.
    Worker([connections.export_queue], connection=connections.redis, name=name).work(
        with_scheduler=True, logging_level="INFO"
    )


if __name__ == "__main__":
    main()
