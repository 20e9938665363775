"""A schedule delivering to destinations in headless Chromium: an administrator ticks two of the
workspace's destinations (a folder and a bucket on moto's S3 server over HTTP, the bucket's secret
wrong) and no recipient, presses Run now, and watches the run history: the folder's copy is
delivered, the bucket's fails in words. With the secret fixed, Retry delivers it. A copy to an
SFTP server that is down fails transiently, waits for its retry, and is delivered once the server
is back. The runs and the copies are dispatched by a real `flask scheduler` process and made by a
real `rq` worker."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import ExportFile
from app.models.schedule import Schedule, ScheduleDestination, ScheduleRun
from app.models.schedule_destination_delivery import DestinationDelivery
from app.models.types import utcnow
from app.security.credentials import encrypt_secret
from app.storage import get_storage
from tests import factories
from tests.fixtures.browser import accessibility_violations, fresh, sign_in
from tests.fixtures.s3 import BUCKET
from tests.fixtures.workers import wait_for

# The worker and the scheduler start cold on a loaded 2-core machine.
RUN_TIMEOUT_MS = 60_000


def _delivery(delivery_id: int) -> DestinationDelivery:
    return fresh(select(DestinationDelivery).where(DestinationDelivery.id == delivery_id)).scalar_one()


def _row_of(page, delivery_id: int):
    return page.locator(f"#destination-delivery-{delivery_id}")


@pytest.mark.browser
def test_a_schedule_delivers_to_a_folder_and_a_bucket_and_a_failed_copy_is_retried(
    world,
    live_server,
    browser_page,
    browser_console_errors,
    destinations_root,
    s3_destination,
    s3_account,
    start_worker,
    start_scheduler,
):
    query = factories.make_query(world.workspace, world.admin, name="Hours for finance")
    folder = factories.make_destination(world.workspace, name="Local folder", path="exports")
    bucket = s3_destination(world.workspace, name="Finance bucket", path="rhythm", secret="not-the-secret")
    start_worker()
    start_scheduler()
    page = browser_page

    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/new")
    page.get_by_label("Name", exact=True).fill("Hours to finance")
    page.get_by_label("Saved query or report").select_option(f"query:{query.id}")
    page.get_by_label("Local folder").check()
    page.get_by_label("Finance bucket").check()
    assert accessibility_violations(page) == []
    page.get_by_role("button", name="Save schedule").click()
    page.wait_for_url(re.compile(r"/schedules/\d+$"))
    schedule = fresh(select(Schedule)).scalar_one()
    assert schedule.recipients == []

    page.get_by_role("button", name="Run now").click()
    page.get_by_text("A run was started.").wait_for()
    run_id = fresh(select(ScheduleRun.id)).scalar_one()
    page.locator(f"#run-{run_id} h3 .status-succeeded").wait_for(timeout=RUN_TIMEOUT_MS)
    deliveries = dict(
        fresh(
            select(DestinationDelivery.destination_id, DestinationDelivery.id).where(
                DestinationDelivery.run_id == run_id
            )
        )
        .tuples()
        .all()
    )
    to_folder, to_bucket = _row_of(page, deliveries[folder.id]), _row_of(page, deliveries[bucket.id])
    to_folder.locator(".status-delivered").wait_for(timeout=RUN_TIMEOUT_MS)
    to_bucket.locator(".status-failed").wait_for(timeout=RUN_TIMEOUT_MS)

    assert "SignatureDoesNotMatch: the secret access key does not match the access key ID." in to_bucket.inner_text()
    assert "DESTINATIONS_ROOT/exports/" in to_folder.inner_text()
    assert "not-the-secret" not in page.content() and str(destinations_root) not in page.content()
    assert accessibility_violations(page) == []

    bucket.secret_ciphertext = encrypt_secret(s3_account.secret)
    db.session.commit()
    to_bucket.get_by_role("button", name="Retry the delivery to Finance bucket").click()
    page.get_by_text("The delivery is being tried again").wait_for()
    _row_of(page, deliveries[bucket.id]).locator(".status-delivered").wait_for(timeout=RUN_TIMEOUT_MS)

    run = fresh(select(ScheduleRun).where(ScheduleRun.id == run_id)).scalar_one()
    export = fresh(select(ExportFile).where(ExportFile.id == run.export_id)).scalar_one()
    data = b"".join(get_storage().read_chunks(export.storage_key))
    name = fresh(
        select(DestinationDelivery.target_key).where(DestinationDelivery.id == deliveries[folder.id])
    ).scalar_one()
    assert (destinations_root / "exports" / name).read_bytes() == data
    assert s3_account.client.get_object(Bucket=BUCKET, Key=f"rhythm/{name}")["Body"].read() == data
    assert _row_of(page, deliveries[bucket.id]).locator("td").nth(2).inner_text() == "2"
    assert browser_console_errors == []


@pytest.mark.browser
def test_a_copy_to_an_sftp_server_that_is_down_waits_for_its_retry_and_is_delivered_once_it_is_back(
    world,
    live_server,
    browser_page,
    browser_console_errors,
    sftp_server,
    sftp_destination,
    start_worker,
    start_scheduler,
):
    query = factories.make_query(world.workspace, world.admin, name="Hours for payroll")
    server = sftp_destination(world.workspace, name="Payroll server", path="inbound")
    schedule = factories.make_schedule(query, world.admin, name="Hours to payroll")
    schedule.recipients = []
    schedule.destinations.append(ScheduleDestination(destination_id=server.id))
    db.session.commit()
    sftp_server.stop()
    start_worker()
    start_scheduler()
    page = browser_page

    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/{schedule.id}")
    page.get_by_role("button", name="Run now").click()
    run_id = wait_for(lambda: fresh(select(ScheduleRun.id)).scalar_one_or_none(), what="the run")
    delivery_id = wait_for(
        lambda: fresh(select(DestinationDelivery.id)).scalar_one_or_none(), timeout=60, what="the copy"
    )
    wait_for(lambda: _delivery(delivery_id).status == "failed", timeout=60, what="the first attempt to fail")
    page.reload()

    row = _row_of(page, delivery_id)
    assert "failed, waiting for a retry" in row.locator(".status").inner_text()
    assert "It is tried again at" in row.inner_text()
    assert _delivery(delivery_id).failure_class == "transient"

    sftp_server.start()
    failed = _delivery(delivery_id)
    failed.next_attempt_at = utcnow() - timedelta(seconds=1)  # the retry's minute has passed
    db.session.commit()
    page.reload()  # the page polls again while a copy is due
    _row_of(page, delivery_id).locator(".status-delivered").wait_for(timeout=RUN_TIMEOUT_MS)

    assert list(sftp_server.files()) == [f"inbound/{_delivery(delivery_id).target_key}"]
    assert _row_of(page, delivery_id).locator("td").nth(2).inner_text() == "2"
    assert "Run 1 ·" in page.locator(f"#run-{run_id} h3").inner_text()
    assert sftp_server.password not in page.content()
    assert browser_console_errors == []
