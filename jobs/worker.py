"""`python -m jobs.worker`: one RQ worker on the export queue named in the settings.

Start as many as needed, on any machine that reaches the same Redis, database and storage.
"""

from __future__ import annotations

import logging
import os
import socket
import sys

from redis import Redis
from rq import Queue, Worker

from jobs.app_context import worker_app


def main() -> None:
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(asctime)s worker %(levelname)s %(message)s")
    app = worker_app()
    with app.app_context():
        settings = app.config["SETTINGS"]
    connection = Redis.from_url(settings.redis_url)
    queue = Queue(settings.export_queue, connection=connection)
    name = f"exports-{socket.gethostname()}-{os.getpid()}"
    Worker([queue], connection=connection, name=name).work(with_scheduler=True, logging_level="INFO")


if __name__ == "__main__":
    main()
