"""The registered kinds of background work, one `WorkKind` each (docs/architecture.md "The work
engine"). Each kind keeps its row-level SQL and its guarded transitions in its own services;
its spec names them, with its retry policy as data. Adding a kind is a spec here, in
`WORK_KINDS`, and a job function."""

from __future__ import annotations

from app.services.files import outbox, watchdog
from app.services.schedules import schedule_run_dispatch
from app.services.work.queue import WorkPriority
from app.services.work.work_kind import WorkKind
from app.services.workspace_export import (
    execution_dispatch,
    execution_watchdog,
    package_delivery,
    package_delivery_dispatch,
)

FILES = WorkKind(
    name="file",
    slug=outbox.EXPORT_JOB_SLUG,
    # A person waits for the file they asked for; a schedule's file goes on the scheduled queue.
    priority=WorkPriority.INTERACTIVE,
    job_function=outbox.EXPORT_JOB,
    retries=watchdog.RETRIES,
    dispatch_pending=lambda now: outbox.dispatch_pending(),
    lost=outbox.lost,
    lapsed=watchdog.lapsed,
    give_up=watchdog.give_up,
    requeue=outbox.requeue,
)

RUNS = WorkKind(
    name="run",
    slug=schedule_run_dispatch.RUN_JOB_SLUG,
    priority=WorkPriority.SCHEDULED,
    job_function=schedule_run_dispatch.RUN_JOB,
    retries=schedule_run_dispatch.RETRIES,
    # Runs admitted by "Run now", and runs whose retry delay has passed.
    dispatch_pending=schedule_run_dispatch.dispatch_queued,
    lost=schedule_run_dispatch.lost,
    lapsed=schedule_run_dispatch.lapsed,
    give_up=schedule_run_dispatch.give_up,
    requeue=schedule_run_dispatch.requeue,
)

EXECUTIONS = WorkKind(
    name="execution",
    slug=execution_dispatch.EXECUTION_JOB_SLUG,
    priority=WorkPriority.BULK,
    job_function=execution_dispatch.EXECUTION_JOB,
    retries=execution_watchdog.RETRIES,
    # Workspace exports whose admission could not enqueue them.
    dispatch_pending=lambda now: execution_dispatch.dispatch_queued(),
    lost=execution_dispatch.lost,
    lapsed=execution_watchdog.lapsed,
    give_up=execution_watchdog.give_up,
    requeue=execution_dispatch.requeue,
)

DELIVERIES = WorkKind(
    name="delivery",
    slug=package_delivery_dispatch.DELIVERY_JOB_SLUG,
    priority=WorkPriority.BULK,
    job_function=package_delivery_dispatch.DELIVERY_JOB,
    # A copy whose worker died is a transient failure like any other: retried after the backoff.
    retries=package_delivery.RETRIES,
    # Deliveries whose retry time has come, and pending ones whose process died.
    dispatch_pending=package_delivery_dispatch.dispatch_due,
    lost=package_delivery_dispatch.lost,
    lapsed=package_delivery_dispatch.lapsed,
    give_up=package_delivery_dispatch.give_up_lapsed,
    retry_later=package_delivery_dispatch.retry_lapsed_later,
    requeue=package_delivery_dispatch.requeue,
)

WORK_KINDS: tuple[WorkKind, ...] = (FILES, RUNS, EXECUTIONS, DELIVERIES)
