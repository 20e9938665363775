"""/metrics: Prometheus' text, behind a bearer token, adding up what real worker processes did."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.queue import WorkPriority, work_queue
from tests.fixtures.apps import configuring_fixture
from tests.fixtures.workers import file_row, let_the_heartbeat_run_out, wait_for

TOKEN = "metrics-token-for-tests"


@configuring_fixture(lambda directory: {"PROMETHEUS_MULTIPROC_DIR": str(directory), "METRICS_TOKEN": TOKEN})
def metrics_directory(tmp_path) -> Path:
    """A multiprocess directory for this test's workers and scheduler, read by the app's /metrics, with a token."""
    directory = tmp_path / "metrics"
    directory.mkdir()
    return directory


def scrape(client) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    samples = {}
    for family in text_string_to_metric_families(response.get_data(as_text=True)):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def test_metrics_does_not_exist_without_a_token_configured(client):
    assert client.get("/metrics").status_code == 404


def test_metrics_refuses_a_missing_or_wrong_token(client, metrics_directory):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": TOKEN}).status_code == 401


def test_a_file_made_by_a_real_worker_moves_the_job_counter_and_histogram(
    client, export_scenario, isolated_storage, metrics_directory, start_worker
):
    export_scenario.add_timesheet_rows(20)
    export = export_scenario.request_file("csv")
    start_worker()
    assert dispatch_pending(FILES) == 1
    wait_for(lambda: file_row(export.id).is_settled, what="the file to settle")
    assert file_row(export.id).status == "succeeded"

    samples = scrape(client)
    labels = (("kind", "export_file"), ("outcome", "succeeded"))
    assert samples[("rhythm_jobs_total", labels)] == 1
    assert samples[("rhythm_job_duration_seconds_count", (("kind", "export_file"),))] == 1
    assert samples[("rhythm_job_duration_seconds_sum", (("kind", "export_file"),))] > 0


def test_two_files_on_one_worker_add_up_in_one_metrics_file(
    client, export_scenario, isolated_storage, metrics_directory, start_worker
):
    # Each job runs in a forked work-horse; they share the worker's file instead of leaving one each.
    first, second = export_scenario.request_file("csv"), export_scenario.request_file("csv")
    start_worker()
    assert dispatch_pending(FILES) == 2
    wait_for(lambda: file_row(first.id).is_settled and file_row(second.id).is_settled, what="both files")

    assert scrape(client)[("rhythm_jobs_total", (("kind", "export_file"), ("outcome", "succeeded")))] == 2
    job_files = [path.name for path in metrics_directory.iterdir() if path.name.startswith(("counter", "histogram"))]
    assert all(re.match(r"^(counter|histogram)_exports-.+\.db$", name) for name in job_files), job_files
    assert len(job_files) == 2


def test_queue_depth_and_oldest_age_are_reported(client, app_context, metrics_directory):
    work_queue(WorkPriority.INTERACTIVE).enqueue("jobs.export_file.run", 0)
    samples = scrape(client)
    queue = (("queue", work_queue(WorkPriority.INTERACTIVE).name),)
    assert samples[("rhythm_queue_depth", queue)] == 1
    assert samples[("rhythm_queue_oldest_age_seconds", queue)] >= 0
    assert samples[("rhythm_queue_workers", queue)] == 0


def test_a_killed_worker_is_not_counted_once_its_heartbeat_ran_out(client, app_context, metrics_directory, rq_worker):
    queue = (("queue", work_queue(WorkPriority.INTERACTIVE).name),)
    wait_for(lambda: scrape(client)[("rhythm_queue_workers", queue)] == 1, timeout=30, what="the worker to register")

    rq_worker.kill()
    let_the_heartbeat_run_out(rq_worker)

    assert scrape(client)[("rhythm_queue_workers", queue)] == 0


def test_the_scheduler_counts_what_its_periodic_tasks_handled(
    client, export_scenario, metrics_directory, start_scheduler
):
    export_scenario.request_file("csv")  # waits in the outbox for the dispatcher
    start_scheduler()
    task = (("task", "dispatch pending work"),)
    wait_for(
        lambda: scrape(client).get(("rhythm_periodic_actions_total", task), 0) >= 1,
        timeout=30,
        what="the scheduler to dispatch the file",
    )
