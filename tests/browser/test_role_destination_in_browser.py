"""An S3 destination by role added in Chromium: choosing a role hides the key's fields and shows
Rhythm's principal, the workspace's external id and the trust policy; Test connection (through
htmx) assumes the role on moto's STS and writes, reads back and deletes a test object."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.models import Workspace
from app.models.export_destination import ExportDestination
from tests.fixtures.browser import fresh, htmx_swap, sign_in
from tests.fixtures.destinations import PRINCIPAL_ARN
from tests.fixtures.s3 import BUCKET


@pytest.mark.browser
def test_an_administrator_adds_a_destination_by_role_and_its_test_assumes_the_role(
    world, live_server, browser_page, browser_console_errors, aws_role
):
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/destinations")

    assert page.get_by_label("Access key id").is_visible()
    page.get_by_label("A role in your AWS account").check()
    assert page.get_by_label("Access key id").is_hidden()
    external_id = fresh(select(Workspace.aws_external_id).where(Workspace.id == world.workspace.id)).scalar_one()
    page.locator("#role-principal", has_text=PRINCIPAL_ARN).wait_for()
    page.locator("#role-external-id", has_text=external_id).wait_for()
    assert external_id in page.locator("#role-trust-policy").input_value()
    page.get_by_label("Name", exact=True).fill("Warehouse by role")
    page.get_by_label("Bucket name").fill(BUCKET)
    page.get_by_label("Region").fill("us-east-1")
    page.locator("#endpoint_url").fill(aws_role.endpoint)
    page.locator("#role_arn").fill(aws_role.role_arn)
    page.get_by_label("Destination path").fill("rhythm/exports")
    page.get_by_role("button", name="Add destination").click()
    page.wait_for_url(re.compile(r"/export/destinations/\d+$"))
    destination = fresh(select(ExportDestination)).scalar_one()
    assert (destination.s3_access, destination.secret_ciphertext) == ("role", None)

    htmx_swap(page, lambda: page.get_by_role("button", name="Test connection").click())
    page.locator("#test-result", has_text="Wrote, read back and deleted a test object").wait_for()
    assert [r.external_id for r in aws_role.assumed_roles()] == [external_id]
    assert browser_console_errors == []
