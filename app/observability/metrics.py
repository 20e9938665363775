"""Prometheus metrics, added up across every process (web workers, rq workers, the scheduler).

prometheus-client's multiprocess mode: each process writes its values to files in
PROMETHEUS_MULTIPROC_DIR and `/metrics` reads them all. prometheus-client reads that variable
itself, when it is loaded, which is why the metrics below are made on first use, never at import;
`/metrics` reads the same folder from the app's settings (`Settings.metrics_directory`).

An rq worker forks a work-horse for every job. The horses of one worker run one after another,
so they share one file, named for the worker (`name_this_process`, called by jobs/worker.py):
otherwise every job would leave a file of its own behind. The worker process itself never
touches a metric, so each horse starts from the file's current values.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, values
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

# Jobs take from a tenth of a second (a small file) to hours (a big workspace package).
_DURATION_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 7200, 21600)


# The name this process's metrics file goes by; its pid unless named. Forked work-horses inherit it.
_process_name: str | None = None


def name_this_process(name: str) -> None:
    global _process_name
    _process_name = name


def _process_identifier() -> str:
    return _process_name or str(os.getpid())


# prometheus-client chose multiprocess values when it was loaded: they go by this process's name.
if values.ValueClass is not values.MutexValue:
    values.ValueClass = values.MultiProcessValue(process_identifier=_process_identifier)


@dataclass(frozen=True)
class _Metrics:
    jobs: Counter
    job_seconds: Histogram
    periodic_actions: Counter


@functools.cache
def _metrics() -> _Metrics:
    return _Metrics(
        jobs=Counter(
            "rhythm_jobs",
            "Jobs finished, by kind (export_file, schedule_run, package_execution, package_delivery) "
            "and outcome (succeeded, a failure code, superseded, already_settled…)",
            ("kind", "outcome"),
        ),
        job_seconds=Histogram(
            "rhythm_job_duration_seconds", "How long jobs took, by kind", ("kind",), buckets=_DURATION_BUCKETS
        ),
        periodic_actions=Counter(
            "rhythm_periodic_actions",
            "Records handled by the periodic tasks (sweeps, watchdogs, dispatchers)",
            ("task",),
        ),
    )


def observed_job(kind: str) -> Callable[[Callable[[int], str]], Callable[[int], str]]:
    """Wrap a job entry point `run(record_id) -> outcome word`: time it, count its outcome, and
    give its log lines the job id and the record."""

    def decorate(run: Callable[[int], str]) -> Callable[[int], str]:
        @functools.wraps(run)
        def observed(record_id: int) -> str:
            from rq import get_current_job

            from app.observability.context import job_context

            job = get_current_job()
            started = time.monotonic()
            outcome = "error"
            with job_context(job.id if job is not None else None, kind, record_id):
                try:
                    outcome = run(record_id)
                    return outcome
                finally:
                    metrics = _metrics()
                    metrics.jobs.labels(kind, outcome).inc()
                    metrics.job_seconds.labels(kind).observe(time.monotonic() - started)

        return observed

    return decorate


def count_periodic_actions(task: str, handled: int) -> None:
    if handled:
        _metrics().periodic_actions.labels(task).inc(handled)


class QueueCollector:
    """Queue depth, the oldest queued job's age and the workers, read from Redis at each scrape."""

    def __init__(self, queues: Callable[[], list]):
        self._queues = queues

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from datetime import UTC, datetime

        from app.services.work.queue import live_workers

        depth = GaugeMetricFamily("rhythm_queue_depth", "Jobs waiting in the queue", labels=["queue"])
        oldest = GaugeMetricFamily("rhythm_queue_oldest_age_seconds", "Age of the oldest waiting job", labels=["queue"])
        workers = GaugeMetricFamily("rhythm_queue_workers", "Live workers listening on the queue", labels=["queue"])
        now = datetime.now(UTC)
        for queue in self._queues():
            depth.add_metric([queue.name], queue.count)
            first = queue.get_job_ids(0, 1)
            job = queue.fetch_job(first[0]) if first else None
            enqueued_at = job.enqueued_at if job is not None else None
            if enqueued_at is not None and enqueued_at.tzinfo is None:
                enqueued_at = enqueued_at.replace(tzinfo=UTC)
            oldest.add_metric([queue.name], (now - enqueued_at).total_seconds() if enqueued_at else 0.0)
            workers.add_metric([queue.name], len(live_workers(queue)))
        yield depth
        yield oldest
        yield workers


class _ThisProcess:
    """This process's own values, when there is no multiprocess directory (one process alone)."""

    def collect(self):
        from prometheus_client import REGISTRY

        return REGISTRY.collect()


def exposition(queues: Callable[[], list], directory: str | None) -> bytes:
    """The text every process's metrics in `directory` add up to (this process's own when None),
    plus the queue gauges, in Prometheus' format."""
    registry = CollectorRegistry()
    if directory:
        MultiProcessCollector(registry, path=directory)
    else:
        registry.register(_ThisProcess())
    registry.register(QueueCollector(queues))
    return generate_latest(registry)
