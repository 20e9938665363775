"""The app's Redis client and its RQ export queue, made once with the app, and the one way a
dispatcher puts a job on that queue: claim the row first, then enqueue.

`init_app` (called by create_app) builds one Redis client, hence one connection pool, per app:
every request, job and periodic task of the process borrows connections from it instead of
opening its own. redis-py's pool notices a fork and starts afresh in the child, so RQ's
work-horses never share their parent's sockets.

Claim, then enqueue. The database row, not Redis, is the truth about work to do (Redis loses
jobs: a killed worker's job is failed, a flushed Redis forgets its queue). So every dispatcher
first claims its row with a guarded UPDATE naming the new job's id, commits, and only then
enqueues: two dispatchers on two machines never both enqueue one claim. An enqueue that fails
after the claim (Redis down) is logged, never raised, and the claim is not released: the row
names a job Redis does not have, which is exactly what the work engine's lost-job check looks
for (`work_kind.job_is_lost` once `work_kind.LOST_AFTER` has passed), so the engine's periodic
`redispatch_lost` enqueues it again once Redis answers. Nothing is lost and nothing waits on a second transition.

Priorities. Work goes on one of three queues by who waits for it (`WorkPriority`): a person's
file on the page (interactive), scheduled runs, and bulk work (workspace packages and their
deliveries). Every worker listens to all three, in priority order, so a file requested by a
person is taken before a backlog of scheduled runs; and on one dequeue in `FAIR_SHARE_EVERY`
the order is turned round (`listening_order`), so a steady stream of interactive or scheduled
work never starves the kinds below it. The interactive queue keeps the settings' queue name
(`EXPORT_QUEUE`), so jobs queued before priorities existed are still taken.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from flask import Flask, current_app
from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Worker
from rq.worker import BaseWorker

from app.domain.errors import TransitionRefused

log = logging.getLogger(__name__)

# Connections show under this name in Redis's CLIENT LIST.
CLIENT_NAME = "rhythm-exports"
# Failed jobs stay inspectable in RQ's failed registry for a week.
FAILURE_TTL_SECONDS = 7 * 24 * 3600

# The key of the app's QueueConnections in app.extensions, where Flask keeps extensions' state.
EXTENSION_KEY = "rhythm_exports_queue"


# On one dequeue in this many, a worker looks at the lower priorities first.
FAIR_SHARE_EVERY = 4


class WorkPriority(StrEnum):
    """Who waits for a job, highest first (the order of the members is the listening order)."""

    INTERACTIVE = "interactive"  # a person on the page: their own file
    SCHEDULED = "scheduled"  # a schedule's run, due now
    BULK = "bulk"  # workspace packages and their deliveries: minutes of work nobody watches


def queue_name(base: str, priority: WorkPriority) -> str:
    """The RQ queue of `priority`; the interactive one keeps the configured name."""
    return base if priority is WorkPriority.INTERACTIVE else f"{base}-{priority}"


def listening_order(turn: int) -> list[WorkPriority]:
    """The priorities a worker takes its `turn`-th job from, first to last: highest first, except on
    every FAIR_SHARE_EVERY-th turn, when the lowest come first so that no kind waits forever."""
    order = list(WorkPriority)
    return order[::-1] if turn % FAIR_SHARE_EVERY == FAIR_SHARE_EVERY - 1 else order


@dataclass
class QueueConnections:
    redis: Redis
    queues: dict[WorkPriority, Queue]


def init_app(app: Flask) -> None:
    settings = app.config["SETTINGS"]
    redis = Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=10, client_name=CLIENT_NAME)
    app.extensions[EXTENSION_KEY] = QueueConnections(
        redis=redis,
        queues={
            priority: Queue(queue_name(settings.export_queue, priority), connection=redis) for priority in WorkPriority
        },
    )


def queue_connections(app: Flask | None = None) -> QueueConnections:
    """The Redis client and export queue of `app`, by default the current one."""
    connections: QueueConnections = (app or current_app).extensions[EXTENSION_KEY]
    return connections


def redis_connection() -> Redis:
    return queue_connections().redis


def work_queue(priority: WorkPriority) -> Queue:
    return queue_connections().queues[priority]


def work_queues() -> list[Queue]:
    """Every queue, highest priority first."""
    return [work_queue(priority) for priority in WorkPriority]


def live_workers(queue: Queue) -> list[BaseWorker]:
    """The workers listening on `queue` whose heartbeat is live: the one count readiness, the
    `rhythm_queue_workers` metric and the staff's queue page give. RQ keeps a killed worker in the
    queue's worker set (`Worker.count` counts it) until a clean shutdown that never comes; its own
    key, which each heartbeat renews, expires (WORKER_TTL_SECONDS + 60 s after the last one), and
    `Worker.all` reads only the workers whose key is there."""
    return Worker.all(queue=queue)


def worker_is_live(connection: Redis, worker_name: str | None) -> bool:
    """Whether the worker named `worker_name` still has its key, which its heartbeat renews (the
    rule `live_workers` counts by): a killed worker's jobs stay "started" after it is gone."""
    if not worker_name:
        return False
    return bool(connection.exists(Worker.redis_worker_namespace_prefix + worker_name))


@dataclass(frozen=True)
class ClaimedJob:
    """The job that carries one claimed row: `function(argument)`, under the job id the claim
    recorded, on the queue of its priority."""

    function: str
    argument: int
    job_id: str
    description: str
    priority: WorkPriority


def claim_and_enqueue(claim: Callable[[], object], job: ClaimedJob) -> bool:
    """Claim the row, then enqueue its job; True when the job is on the queue.

    `claim` is the row's guarded UPDATE recording `job.job_id`, committed, raising
    TransitionRefused when another dispatcher claimed it first or the row may no longer run:
    then nothing is enqueued. False too when the enqueue failed (the claim stays; see above).
    """
    try:
        claim()
    except TransitionRefused:
        return False
    return enqueue_claimed([job]) == 1


def enqueue_claimed(jobs: Sequence[ClaimedJob]) -> int:
    """Enqueue, in one Redis round trip, jobs whose rows are claimed and committed already;
    returns how many are on the queue now (all of them, or none when Redis failed)."""
    if not jobs:
        return 0
    timeout = current_app.config["SETTINGS"].export_job_timeout
    by_priority: defaultdict[WorkPriority, list[ClaimedJob]] = defaultdict(list)
    for job in jobs:
        by_priority[job.priority].append(job)
    # The queues share the app's one client; a test may point them all at another.
    connection = work_queue(WorkPriority.INTERACTIVE).connection
    try:
        with connection.pipeline() as pipeline:
            for priority, claimed in by_priority.items():
                queue = work_queue(priority)
                prepared = [
                    queue.prepare_data(
                        job.function,
                        args=(job.argument,),
                        job_id=job.job_id,
                        timeout=timeout,
                        failure_ttl=FAILURE_TTL_SECONDS,
                        description=job.description,
                    )
                    for job in claimed
                ]
                queue.enqueue_many(prepared, pipeline=pipeline)
            pipeline.execute()
    except RedisError as exc:
        log.warning(
            "enqueueing %s failed (%s); each claim stays, and the periodic dispatcher will dispatch it again"
            " once the lost-job check finds it",
            _named(jobs),
            exc,
        )
        return 0
    log.info("dispatched %s", _named(jobs))
    return len(jobs)


def _named(jobs: Sequence[ClaimedJob]) -> str:
    return "; ".join(f"{job.description} as job {job.job_id}" for job in jobs)
