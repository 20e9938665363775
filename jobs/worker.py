"""`python -m jobs.worker`: one RQ worker on the export queue named in the settings.

Start as many as needed, on any machine that reaches the same Redis, database and storage.
"""

from __future__ import annotations

import logging
import os
import socket
import sys

from rq import Worker

from jobs.app_context import worker_app


def main() -> None:
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(asctime)s worker %(levelname)s %(message)s")
    app = worker_app()
    name = f"exports-{socket.gethostname()}-{os.getpid()}"
    # The app's own client: the worker and the jobs it runs share the app's connection pool.
    Worker([app.export_queue], connection=app.redis, name=name).work(with_scheduler=True, logging_level="INFO")


if __name__ == "__main__":
    main()
