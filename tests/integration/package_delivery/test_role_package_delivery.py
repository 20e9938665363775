"""Packages delivered to a bucket by role (moto's IAM, STS and S3 over HTTP): a real rq worker
assumes the customer's role for the delivery, with the workspace's external id, and copies the
package with the role's temporary credentials; STS's refusal fails permanently in words; STS out
of reach is retried later."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.models.package_delivery import DeliveryStatus
from app.models.types import utcnow
from app.services.work.claims import dispatch_pending
from app.services.workspace_export import package_delivery
from app.services.workspace_export.delivery_work import DELIVERIES
from tests import factories
from tests.fixtures.s3 import BUCKET
from tests.fixtures.workers import wait_for
from tests.integration.package_delivery.delivery_reading import attempt_outcomes, delivery_row


def _bucket_contents(aws_role) -> dict[str, bytes]:
    listed = aws_role.client.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    return {item["Key"]: aws_role.client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read() for item in listed}


def test_a_worker_assumes_the_role_and_the_package_lands_whole(
    stored_package, world, aws_role, role_destination, start_worker
):
    destination = role_destination(world.workspace, path="rhythm/exports")
    # Left behind by its maker, so the dispatcher hands it to the worker.
    delivery = factories.make_package_delivery(
        stored_package.package, destination, created_at=utcnow() - timedelta(minutes=5)
    )
    worker = start_worker()

    assert dispatch_pending(DELIVERIES, utcnow()) == 1
    wait_for(lambda: delivery_row(delivery.id).status == DeliveryStatus.DELIVERED, what="the delivery")
    worker.stop()

    assert _bucket_contents(aws_role) == stored_package.expected_at("rhythm/exports")
    assert attempt_outcomes(delivery.id) == [(1, "delivered", None, None)]
    sessions = [(r.role_arn, r.external_id, r.session_name) for r in aws_role.assumed_roles()]
    assert sessions == [(aws_role.role_arn, world.workspace.aws_external_id, f"rhythm-workspace-{world.workspace.id}")]
    assert aws_role.principal_secret not in worker.output()


def test_sts_refusing_the_role_fails_permanently_in_words(
    stored_package, world, aws_role, role_destination, monkeypatch
):
    delivery = factories.make_package_delivery(stored_package.package, role_destination(world.workspace))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", aws_role.stranger_access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", aws_role.stranger_secret)

    assert package_delivery.run_delivery(delivery.id) == "failed"

    row = delivery_row(delivery.id)
    assert attempt_outcomes(delivery.id) == [(1, "failed", "permanent", "role_AccessDenied")]
    assert row.failure_summary.startswith(
        "AccessDenied: the role does not trust Rhythm's principal with this workspace's external id"
    )
    assert _bucket_contents(aws_role) == {}


@pytest.mark.environment(AWS_STS_ENDPOINT_URL="http://127.0.0.1:1")
def test_sts_out_of_reach_is_retried_later(stored_package, world, aws_role, role_destination):
    delivery = factories.make_package_delivery(stored_package.package, role_destination(world.workspace))

    assert package_delivery.run_delivery(delivery.id) == "retry_later"

    row = delivery_row(delivery.id)
    assert attempt_outcomes(delivery.id) == [(1, "failed", "transient", "connection_failed")]
    assert row.next_attempt_at is not None and "refused the connection" in row.failure_summary
