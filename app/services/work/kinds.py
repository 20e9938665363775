"""The registered kinds of background work, one `WorkKind` each (docs/architecture.md "The work
engine"). Each kind keeps its row-level SQL and its guarded transitions in its own services;
its spec names them. Adding a kind is a spec here, in `WORK_KINDS`, and a job function."""

from __future__ import annotations

from app.services import (
    execution_dispatch,
    execution_watchdog,
    outbox,
    package_delivery,
    schedule_run_dispatch,
    watchdog,
)
from app.services.queue import WorkPriority
from app.services.work.core import WorkKind

FILES = WorkKind(
    name="file",
    slug=outbox.EXPORT_JOB_SLUG,
    # A person waits for the file they asked for; a schedule's file goes on the scheduled queue.
    priority=WorkPriority.INTERACTIVE,
    job_function=outbox.EXPORT_JOB,
    max_attempts=watchdog.MAX_ATTEMPTS,
    dispatch_pending=lambda now: outbox.dispatch_pending(),
    redispatch_lost=outbox.redispatch_lost,
    redeliver_lapsed=watchdog.redeliver_stalled,
    requeue=outbox.requeue,
)

RUNS = WorkKind(
    name="run",
    slug=schedule_run_dispatch.RUN_JOB_SLUG,
    priority=WorkPriority.SCHEDULED,
    job_function=schedule_run_dispatch.RUN_JOB,
    max_attempts=schedule_run_dispatch.MAX_STALLS,
    # Runs admitted by "Run now", and runs whose retry delay has passed.
    dispatch_pending=schedule_run_dispatch.dispatch_queued,
    redispatch_lost=schedule_run_dispatch.redispatch_lost,
    redeliver_lapsed=schedule_run_dispatch.redeliver_stalled,
    requeue=schedule_run_dispatch.requeue,
)

EXECUTIONS = WorkKind(
    name="execution",
    slug=execution_dispatch.EXECUTION_JOB_SLUG,
    priority=WorkPriority.BULK,
    job_function=execution_dispatch.EXECUTION_JOB,
    max_attempts=execution_watchdog.MAX_ATTEMPTS,
    # Workspace exports whose admission could not enqueue them.
    dispatch_pending=lambda now: execution_dispatch.dispatch_queued(),
    redispatch_lost=execution_dispatch.redispatch_lost,
    redeliver_lapsed=execution_watchdog.redeliver_abandoned_executions,
    requeue=execution_dispatch.requeue,
)

DELIVERIES = WorkKind(
    name="delivery",
    slug=package_delivery.DELIVERY_JOB_SLUG,
    priority=WorkPriority.BULK,
    job_function=package_delivery.DELIVERY_JOB,
    # The first attempt, and one more after each delay of the backoff.
    max_attempts=len(package_delivery.RETRY_BACKOFF) + 1,
    # Deliveries whose retry time has come, and pending ones whose process died.
    dispatch_pending=package_delivery.dispatch_due,
    redispatch_lost=package_delivery.redispatch_lost,
    # An attempt whose worker died becomes a transient failure, retried after its backoff.
    redeliver_lapsed=package_delivery.settle_lapsed,
    requeue=package_delivery.requeue,
)

WORK_KINDS: tuple[WorkKind, ...] = (FILES, RUNS, EXECUTIONS, DELIVERIES)
