"""`python -m jobs.worker`: one RQ worker on the product's queues, highest priority first.

Start as many as needed, on any machine that reaches the same Redis, database and storage.
"""

from __future__ import annotations

import gc
import os
import socket

from flask import Flask
from redis.client import Pipeline
from rq import Queue, Worker, worker_registration
from rq.job import Job
from rq.utils import import_attribute
from sqlalchemy.orm import configure_mappers

from app.observability.logs import configure_logging
from app.observability.metrics import name_this_process
from app.services.work.kinds import WORK_KINDS
from app.services.work.queue import WorkPriority, listening_order, queue_connections
from jobs.app_context import worker_app


class ExportWorker(Worker):
    """An RQ worker that takes work by priority with a fair share for the lower ones, and registers
    itself again when Redis forgot it."""

    def __init__(self, queues: dict[WorkPriority, Queue], **kwargs) -> None:
        super().__init__([queues[priority] for priority in listening_order(0)], **kwargs)
        self._queues_by_priority = queues
        self._turn = 0

    def reorder_queues(self, reference_queue: Queue) -> None:
        """After each job taken: the order the next one is looked for in (queue.listening_order)."""
        self._turn += 1
        self._ordered_queues = [self._queues_by_priority[priority] for priority in listening_order(self._turn)]

    def heartbeat(self, timeout: int | None = None, pipeline: Pipeline | None = None) -> None:
        super().heartbeat(timeout, pipeline)
        if pipeline is None:
            self._register_again_if_forgotten()

    def maintain_heartbeats(self, job: Job) -> None:
        super().maintain_heartbeats(job)
        self._register_again_if_forgotten()

    def _register_again_if_forgotten(self) -> None:
        if self.connection.sismember(self.redis_workers_keys, self.key):
            return
        self.log.warning("Worker %s: Redis no longer lists this worker; registering it again", self.name)
        with self.connection.pipeline() as pipeline:
            pipeline.hset(self.key, mapping=self.serialize())
            worker_registration.register(self, pipeline)
            pipeline.expire(self.key, self.worker_ttl + 60)
            pipeline.execute()


def ready_to_fork() -> Flask:
    """The worker's app, with what every work-horse would otherwise do again for each job done once
    before the first fork: the job functions of every kind imported (about 130 modules of this
    project, and their compilation where no bytecode is cached) and the ORM's mappers configured.
    A horse shares these pages with the worker; measured on a schedule run, they were half of a
    horse's CPU time (bench/README.md, "Schedule runs under a backlog").

    What the worker holds then is frozen out of the garbage collector's reach: a horse's
    collections look at the job's own objects only, not the app's 140,000, and leave the shared
    pages unwritten. A package's COPY keeps thousands of rows alive at a time, and collections
    that walked the app's objects too took more CPU than reading the rows (5,000,000 rows: 17 s
    against 8 s; bench/README.md, "After issue 31")."""
    app = worker_app()
    for kind in WORK_KINDS:
        import_attribute(kind.job_function)
    configure_mappers()
    gc.freeze()
    return app


def main() -> None:
    configure_logging("worker")
    name = f"exports-{socket.gethostname()}-{os.getpid()}"
    # The work-horses this worker forks, one job at a time, share one metrics file (app/observability/metrics.py).
    name_this_process(name)
    app = ready_to_fork()
    connections = queue_connections(app)
    # The app's own client: the worker and the jobs it runs share the app's connection pool.
    # With the default worker TTL of 60 s, a worker Redis forgot is registered again within 45 s.
    worker_ttl = app.config["SETTINGS"].worker_ttl_seconds
    ExportWorker(connections.queues, connection=connections.redis, name=name, worker_ttl=worker_ttl).work(
        with_scheduler=True, logging_level="INFO"
    )


if __name__ == "__main__":
    main()
