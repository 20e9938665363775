"""S3 destinations by role through the pages, against moto's IAM, STS and S3 over HTTP: the form
shows Rhythm's principal, the workspace's external id and the trust policy to paste; the role's
ARN is all that is stored (no secret); Test connection assumes the role, sending the external id
and a session name naming the workspace, and writes, reads back and deletes a test object; STS's
refusal is said in words; without a principal the installation offers no roles."""

from __future__ import annotations

import html
import json
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Workspace
from app.models.export_destination import ExportDestination
from app.models.types import utcnow
from app.services.destinations import role_access
from tests.fixtures.destinations import PRINCIPAL_ARN
from tests.fixtures.s3 import BUCKET
from tests.integration.export_settings.forms import audit_events, counts, destinations_url, s3_form


@pytest.fixture
def admin(client, auth, world):
    auth.login(world.admin.email)
    return world


def role_form(aws_role, **overrides) -> dict:
    values = {
        "name": "Warehouse by role",
        "s3_access": "role",
        "role_arn": aws_role.role_arn,
        "access_key_id": "",
        "secret": "",
        "endpoint_url": aws_role.endpoint,
        "bucket": BUCKET,
        "region": "us-east-1",
    }
    return s3_form(**{**values, **overrides})


def _only_destination(workspace) -> ExportDestination:
    db.session.rollback()
    return db.session.scalars(select(ExportDestination).where(ExportDestination.workspace_id == workspace.id)).one()


def _stored_external_id(workspace) -> str | None:
    db.session.rollback()
    return db.session.scalar(select(Workspace.aws_external_id).where(Workspace.id == workspace.id))


def _test(client, workspace, destination):
    return client.post(destinations_url(workspace, f"/{destination.id}/test"), headers={"HX-Request": "true"})


def test_the_form_shows_the_principal_the_external_id_and_a_trust_policy_naming_both(client, admin, aws_role):
    page = client.get(destinations_url(admin.workspace)).text

    external_id = _stored_external_id(admin.workspace)
    assert external_id is not None and external_id.startswith("rhythm-") and len(external_id) >= 40
    assert f'<code id="role-principal">{PRINCIPAL_ARN}</code>' in page
    assert f'<code id="role-external-id">{external_id}</code>' in page
    shown = page.split('id="role-trust-policy"', 1)[1].split(">", 1)[1].split("</textarea>", 1)[0]
    statement = json.loads(html.unescape(shown))["Statement"][0]
    assert statement == {
        "Effect": "Allow",
        "Principal": {"AWS": PRINCIPAL_ARN},
        "Action": "sts:AssumeRole",
        "Condition": {"StringEquals": {"sts:ExternalId": external_id}},
    }
    assert 'name="role_arn"' in page and 'id="s3-access-role"' in page
    css = client.get("/static/css/app.css").text
    assert 'form:has(input[name="s3_access"]:not([value="role"]):checked) .s3-role { display: none; }' in css
    assert 'form:has(input[name="s3_access"]:not([value="access_key"]):checked) .s3-key { display: none; }' in css


def test_the_external_id_is_made_once_per_workspace_and_differs_between_workspaces(client, admin, aws_role):
    client.get(destinations_url(admin.workspace))
    first = _stored_external_id(admin.workspace)
    client.get(destinations_url(admin.workspace))
    client.post(destinations_url(admin.workspace), data=role_form(aws_role))

    assert _stored_external_id(admin.workspace) == first
    other = role_access.external_id(admin.other_workspace.id)
    assert other != first and role_access.external_id(admin.other_workspace.id) == other


def test_a_destination_by_role_is_added_with_no_secret_and_its_test_assumes_the_role(client, admin, aws_role):
    response = client.post(destinations_url(admin.workspace), data=role_form(aws_role))
    assert response.status_code == 302, response.text

    destination = _only_destination(admin.workspace)
    assert (destination.kind, destination.s3_access, destination.role_arn) == ("s3", "role", aws_role.role_arn)
    assert (destination.access_key_id, destination.secret_ciphertext) == (None, None)
    added = audit_events("export_destination.added")[-1]
    assert added.details["destination"]["role_arn"] == aws_role.role_arn and added.details["secret_set"] is False
    page = client.get(destinations_url(admin.workspace, f"/{destination.id}")).text
    assert aws_role.role_arn in page and "Replace the secret access key" not in page

    result = _test(client, admin.workspace, destination)

    assert "Wrote, read back and deleted a test object" in result.text, result.text
    assert aws_role.client.list_objects_v2(Bucket=BUCKET).get("KeyCount") == 0
    # What STS was asked: moto records it; it checks none of it, so the request is the proof.
    (assumed,) = aws_role.assumed_roles()
    assert assumed.role_arn == aws_role.role_arn
    assert assumed.external_id == _stored_external_id(admin.workspace)
    assert assumed.session_name == f"rhythm-workspace-{admin.workspace.id}"
    assert abs(assumed.expiration - (utcnow().replace(tzinfo=None) + timedelta(seconds=900))) < timedelta(seconds=60)


def test_sts_refusing_the_principal_is_said_in_words(client, admin, aws_role, monkeypatch):
    client.post(destinations_url(admin.workspace), data=role_form(aws_role))
    destination = _only_destination(admin.workspace)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", aws_role.stranger_access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", aws_role.stranger_secret)

    result = _test(client, admin.workspace, destination)

    assert "AccessDenied: the role does not trust Rhythm&#39;s principal with this workspace&#39;s external id" in (
        result.text
    ), result.text
    assert aws_role.assumed_roles() == []


@pytest.mark.parametrize(
    "role_arn",
    ["", "arn:aws:iam::12345:role/x", "arn:aws:iam::123456789012:user/rhythm", "arn:aws:s3:::bucket"],
)
def test_a_role_arn_that_is_not_one_is_refused(client, admin, aws_role, role_arn):
    before = counts()
    response = client.post(destinations_url(admin.workspace), data=role_form(aws_role, role_arn=role_arn))

    assert response.status_code == 400
    assert "ARN" in response.text and counts() == before


def test_without_a_principal_the_page_says_roles_are_unavailable_and_refuses_one(client, admin):
    before = counts()
    page = client.get(destinations_url(admin.workspace)).text
    response = client.post(
        destinations_url(admin.workspace),
        data=s3_form(s3_access="role", role_arn="arn:aws:iam::123456789012:role/rhythm", access_key_id="", secret=""),
    )

    assert "S3 destinations by role are not available on this installation" in page
    assert 'id="role-external-id"' not in page
    assert response.status_code == 400
    assert "S3 destinations by role are not available on this installation" in response.text
    assert counts() == before and _stored_external_id(admin.workspace) is None


def test_a_keyed_destination_edited_to_a_role_forgets_its_key_and_back_needs_a_secret(client, admin, aws_role):
    client.post(destinations_url(admin.workspace), data=s3_form(endpoint_url=aws_role.endpoint, bucket=BUCKET))
    destination = _only_destination(admin.workspace)
    assert destination.secret_ciphertext is not None
    edit_url = destinations_url(admin.workspace, f"/{destination.id}")

    to_role = client.post(edit_url, data=role_form(aws_role, version=str(destination.version)))

    assert to_role.status_code == 302, to_role.text
    edited = _only_destination(admin.workspace)
    assert (edited.s3_access, edited.role_arn, edited.access_key_id, edited.secret_ciphertext) == (
        "role",
        aws_role.role_arn,
        None,
        None,
    )
    back = client.post(
        edit_url,
        data=s3_form(endpoint_url=aws_role.endpoint, bucket=BUCKET, secret="", version=str(edited.version)),
    )
    assert back.status_code == 400 and "Enter the secret access key" in back.text
    assert _only_destination(admin.workspace).s3_access == "role"
