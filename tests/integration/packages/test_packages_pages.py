"""The workspace export pages: the overview with Export now and the allowance, the execution page
and its live part, the package page with volumes, checksums and deliveries, downloads and early
deletion. Administrators only; bad input answers with a message or 404, never 500."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.domain.people.access import current_context
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_execution import ExportExecution
from app.models.export_package import ExportPackage, ExportVolume
from app.models.package_delivery import ExportDeliveryAttempt
from app.models.types import utcnow
from app.services.workspace_export import package_history
from app.storage import get_storage
from tests import factories
from tests.fixtures.routes import HTMX

HOSTILE_DETAIL = "<script>alert(1)</script> “Zoë” & =1+2"
VOLUME_BYTES = b"PK zipped rows of teams"
MANIFEST_BYTES = b'{"package": "manifest"}'


def _url(export_world, tail: str = "") -> str:
    return f"/w/{export_world.workspace.id}/export/{tail}"


@pytest.fixture
def admin_client(client, auth, export_world):
    auth.login(export_world.admin.email)
    return client


def _running(export_world, **counts) -> ExportExecution:
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    attempt = export_execution.start_attempt(execution.id, "worker-1", utcnow() + timedelta(minutes=1))
    if counts:
        export_execution.record_progress(execution.id, attempt, **counts)
    return db.session.get(ExportExecution, execution.id, populate_existing=True)


def _package_with_volume(export_world) -> tuple[ExportPackage, ExportVolume]:
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    package = factories.make_package(
        execution,
        datasets_count=1,
        row_count=3,
        size_bytes=len(VOLUME_BYTES),
        volumes_count=1,
        manifest_size=len(MANIFEST_BYTES),
        manifest_sha256=hashlib.sha256(MANIFEST_BYTES).hexdigest(),
    )
    volume = ExportVolume(
        execution_id=execution.id,
        attempt=1,
        dataset="teams",
        sequence=1,
        key=package.prefix + "teams-0001.csv.zip",
        status="complete",
        row_count=3,
        size_bytes=len(VOLUME_BYTES),
        sha256=hashlib.sha256(VOLUME_BYTES).hexdigest(),
    )
    db.session.add(volume)
    db.session.commit()
    get_storage().put_bytes(volume.key, VOLUME_BYTES)
    get_storage().put_bytes(package.manifest_key, MANIFEST_BYTES)
    return package, volume


# Overview and Export now


def test_overview_shows_the_allowance_used_left_and_when_the_next_frees(admin_client, export_world):
    admitted = utcnow() - timedelta(days=10)
    factories.make_execution(export_world.workspace, export_world.admin, status="succeeded", created_at=admitted)

    page = admin_client.get(_url(export_world)).get_data(as_text=True)

    assert "1 of 10 exports used in the last 30 days; <strong>9 left</strong>" in page
    assert f"The next one frees up on {(admitted + timedelta(days=30)):%Y-%m-%d %H:%M} UTC" in page
    assert "Cancelled exports don't count" in page
    assert f'href="/w/{export_world.workspace.id}/export/settings"' in page
    assert ">Export now</button>" in page


def test_export_now_admits_an_execution_and_opens_its_page(admin_client, export_world):
    response = admin_client.post(_url(export_world, "executions"))

    execution = db.session.scalars(select(ExportExecution)).one()
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/export/executions/{execution.id}")
    assert execution.trigger == "manual" and execution.requested_by_id == export_world.admin.id


def test_a_second_export_now_while_one_runs_answers_with_a_link_to_it(admin_client, export_world):
    running = _running(export_world)

    response = admin_client.post(_url(export_world, "executions"))

    page = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "already queued or running" in page
    assert f'href="/w/{export_world.workspace.id}/export/executions/{running.id}"' in page
    assert len(db.session.scalars(select(ExportExecution)).all()) == 1


def test_an_export_beyond_the_allowance_is_refused_on_the_page(admin_client, export_world):
    export_world.workspace.export_allowance = 1
    db.session.commit()
    factories.make_execution(export_world.workspace, export_world.admin, status="succeeded")

    response = admin_client.post(_url(export_world, "executions"))

    page = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "used all 1 exports its plan allows in any 30 days" in page
    assert "0 left" in page


def test_suspended_settings_show_the_reason_and_no_export_button(admin_client, export_world):
    export_world.settings.status = "suspended"
    export_world.settings.suspended_reason = HOSTILE_DETAIL
    db.session.commit()

    page = admin_client.get(_url(export_world)).get_data(as_text=True)
    refused = admin_client.post(_url(export_world, "executions"))

    assert "suspended by Rhythm staff: &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert ">Export now</button>" not in page
    assert refused.status_code == 409 and "suspended by Rhythm staff" in refused.get_data(as_text=True)


def test_a_workspace_without_settings_is_sent_to_the_settings_page(client, auth, world):
    auth.login(world.admin.email)

    page = client.get(f"/w/{world.workspace.id}/export/").get_data(as_text=True)

    assert "not set up yet" in page and ">Export now</button>" not in page


def test_a_plain_member_gets_404_from_the_overview_and_export_now(client, auth, export_world):
    auth.login(export_world.member.email)

    assert client.get(_url(export_world)).status_code == 404
    assert client.post(_url(export_world, "executions")).status_code == 404
    assert db.session.scalars(select(ExportExecution)).all() == []


# The execution page


@pytest.mark.parametrize("phase", ["snapshot", "writing", "uploading", "delivering", "notifying"])
def test_the_live_part_shows_each_phase_and_keeps_polling(admin_client, export_world, phase):
    execution = _running(export_world)
    export_execution.enter_phase(execution.id, 1, phase)

    response = admin_client.get(_url(export_world, f"executions/{execution.id}/live"), headers=HTMX)

    body = response.get_data(as_text=True)
    assert response.status_code == 200
    assert f"phase <strong>{phase}</strong>" in body
    assert f'<li aria-current="step">{phase}</li>' in body
    assert f"Phase {phase} started." in body


def test_the_execution_page_polls_its_live_part_while_it_runs(admin_client, export_world):
    execution = _running(export_world)

    page = admin_client.get(_url(export_world, f"executions/{execution.id}")).get_data(as_text=True)

    assert f'hx-get="/w/{export_world.workspace.id}/export/executions/{execution.id}/live"' in page
    assert 'hx-trigger="every 2s"' in page and 'id="status-line" role="status"' in page


def test_progress_shows_rows_written_against_the_expected_total(admin_client, export_world):
    execution = _running(
        export_world, rows_expected=200, rows_written=50, datasets_count=2, bytes_written=2048, volumes_count=1
    )

    body = admin_client.get(_url(export_world, f"executions/{execution.id}/live"), headers=HTMX).get_data(as_text=True)

    assert '<label for="rows-progress">Rows written</label>' in body
    assert 'id="rows-progress" class="progress" max="200" value="50"' in body
    assert "50 of 200 rows written (25%)" in body
    assert "<dt>Volumes</dt><dd>1</dd>" in body and "2.0 KB" in body


def test_progress_is_indeterminate_while_the_total_is_unknown(admin_client, export_world):
    execution = _running(export_world)

    body = admin_client.get(_url(export_world, f"executions/{execution.id}/live"), headers=HTMX).get_data(as_text=True)

    assert '<progress id="rows-progress" class="progress">' in body


def test_a_failed_execution_shows_its_code_sentence_and_detail_and_stops_polling(admin_client, export_world):
    execution = _running(export_world)
    export_execution.fail(execution.id, 1, "storage_error", HOSTILE_DETAIL)

    response = admin_client.get(_url(export_world, f"executions/{execution.id}/live"), headers=HTMX)

    body = response.get_data(as_text=True)
    assert response.status_code == 286
    assert "<code>storage_error</code> — The package could not be written to storage." in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; “Zoë” &amp; =1+2" in body
    assert "<script>alert(1)</script>" not in body


def test_a_stalled_execution_says_it_uses_none_of_the_allowance_and_the_workspace_can_export_again(
    admin_client, export_world
):
    execution = _running(export_world)
    export_execution.settle_stalled(execution.id, 1, "The worker stopped renewing its lease.")

    body = admin_client.get(_url(export_world, f"executions/{execution.id}")).get_data(as_text=True)

    assert "<code>stalled</code>" in body and "the workspace can export again" in body
    assert "does not count against the export allowance" in body
    assert "hx-get" not in body


def test_a_succeeded_execution_links_to_its_package(admin_client, export_world):
    package, _ = _package_with_volume(export_world)

    response = admin_client.get(_url(export_world, f"executions/{package.execution_id}/live"), headers=HTMX)

    assert response.status_code == 286
    assert f'href="/w/{export_world.workspace.id}/export/packages/{package.id}"' in response.get_data(as_text=True)


def test_a_queued_execution_is_cancelled_from_its_page(admin_client, export_world):
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    page = admin_client.get(_url(export_world, f"executions/{execution.id}")).get_data(as_text=True)
    assert "Cancel this export" in page

    response = admin_client.post(_url(export_world, f"executions/{execution.id}/cancel"))

    assert response.status_code == 302
    assert db.session.get(ExportExecution, execution.id, populate_existing=True).status == "cancelled"


def test_cancelling_a_running_execution_is_refused_with_a_message(admin_client, export_world):
    execution = _running(export_world)

    response = admin_client.post(_url(export_world, f"executions/{execution.id}/cancel"))

    assert response.status_code == 409
    assert "Only a queued export can be cancelled" in response.get_data(as_text=True)
    assert db.session.get(ExportExecution, execution.id, populate_existing=True).status == "running"


# The package page and downloads


def test_the_package_page_lists_volumes_with_their_checksums(admin_client, export_world):
    package, volume = _package_with_volume(export_world)

    page = admin_client.get(_url(export_world, f"packages/{package.id}")).get_data(as_text=True)

    assert hashlib.sha256(VOLUME_BYTES).hexdigest() in page
    assert hashlib.sha256(MANIFEST_BYTES).hexdigest() in page
    assert f"packages/{package.id}/volume?volume={volume.id}" in page
    assert "teams-0001.csv.zip" in page
    assert "Retention deadline" in page and f"{package.expires_at:%Y-%m-%d %H:%M}" in page


def test_the_package_page_lists_each_delivery_with_every_attempt(admin_client, export_world):
    package, _ = _package_with_volume(export_world)
    destination = factories.make_destination(export_world.workspace, name="Warehouse <b>bucket</b>")
    delivery = factories.make_package_delivery(
        package,
        destination,
        status="failed",
        failure_class="transient",
        failure_code="timeout",
        failure_summary="Read timed out",
        attempt_count=2,
    )
    now = utcnow()
    db.session.add_all(
        [
            ExportDeliveryAttempt(
                delivery_id=delivery.id,
                number=1,
                started_at=now,
                ended_at=now,
                outcome="failed",
                failure_class="transient",
                failure_code="throttled",
                summary="Slow down",
            ),
            ExportDeliveryAttempt(
                delivery_id=delivery.id,
                number=2,
                started_at=now,
                ended_at=now,
                outcome="failed",
                failure_class="transient",
                failure_code="timeout",
                summary="Read timed out",
            ),
        ]
    )
    db.session.commit()

    page = admin_client.get(_url(export_world, f"packages/{package.id}")).get_data(as_text=True)

    assert "Warehouse &lt;b&gt;bucket&lt;/b&gt;" in page
    assert "<code>throttled</code>" in page and "Slow down" in page
    assert page.count('<td class="num">1</td>') >= 1 and '<td class="num">2</td>' in page


def test_an_administrator_downloads_the_manifest_and_a_volume(admin_client, export_world):
    package, volume = _package_with_volume(export_world)

    manifest = admin_client.get(_url(export_world, f"packages/{package.id}/manifest"))
    volume_response = admin_client.get(_url(export_world, f"packages/{package.id}/volume?volume={volume.id}"))

    assert manifest.status_code == 200 and manifest.data == MANIFEST_BYTES
    assert manifest.headers["Content-Disposition"] == (
        f"attachment; filename=workspace-{export_world.workspace.id}-package-{package.id}-manifest.json"
    )
    assert volume_response.status_code == 200 and volume_response.data == VOLUME_BYTES
    assert volume_response.headers["Content-Disposition"] == "attachment; filename=teams-0001.csv.zip"
    assert volume_response.mimetype == "application/zip"


def test_a_download_announces_the_stored_length_even_when_the_record_says_otherwise(admin_client, export_world):
    package, _ = _package_with_volume(export_world)
    package.manifest_size = 0
    db.session.commit()

    manifest = admin_client.get(_url(export_world, f"packages/{package.id}/manifest"))

    assert manifest.headers["Content-Length"] == str(len(MANIFEST_BYTES))
    assert manifest.data == MANIFEST_BYTES


def test_a_plain_member_cannot_download(client, auth, export_world):
    package, volume = _package_with_volume(export_world)
    auth.login(export_world.member.email)

    assert client.get(_url(export_world, f"packages/{package.id}/manifest")).status_code == 404
    assert client.get(_url(export_world, f"packages/{package.id}/volume?volume={volume.id}")).status_code == 404


def _from_the_other_workspace(auth, export_world, tail: str) -> str:
    """Signed in as the other workspace's administrator: `tail` under their own workspace's URL."""
    auth.login(export_world.other_admin.email)
    return f"/w/{export_world.other_workspace.id}/export/{tail}"


def test_another_workspaces_package_is_not_found_from_ones_own(client, auth, export_world):
    package, volume = _package_with_volume(export_world)
    own = _from_the_other_workspace(auth, export_world, f"packages/{package.id}")

    assert client.get(own).status_code == 404
    assert client.get(own + "/manifest").status_code == 404
    assert client.get(own + f"/volume?volume={volume.id}").status_code == 404


def test_another_workspaces_package_cannot_be_deleted_from_ones_own(client, auth, export_world):
    package, _ = _package_with_volume(export_world)
    own = _from_the_other_workspace(auth, export_world, f"packages/{package.id}/delete")

    assert client.get(own).status_code == 404
    assert client.post(own, data={"confirm": "y"}).status_code == 404
    assert db.session.get(ExportPackage, package.id, populate_existing=True).status == "available"


def test_another_workspaces_execution_is_not_found_from_ones_own(client, auth, export_world):
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    own = _from_the_other_workspace(auth, export_world, f"executions/{execution.id}")

    assert client.get(own).status_code == 404
    assert client.get(own + "/live").status_code == 404
    assert client.post(own + "/cancel").status_code == 404
    assert db.session.get(ExportExecution, execution.id, populate_existing=True).status == "queued"


def test_the_loaders_find_nothing_for_a_member_who_is_not_an_administrator(export_world):
    package, _ = _package_with_volume(export_world)
    member = current_context(export_world.workspace.id, export_world.member.id)
    admin = current_context(export_world.workspace.id, export_world.admin.id)

    assert package_history.get_package(member, package.id) is None
    assert package_history.get_execution(member, package.execution_id) is None
    assert package_history.get_package(admin, package.id) == package
    assert package_history.get_execution(admin, package.execution_id) == package.execution


def test_a_volume_of_another_package_is_not_served_under_this_one(admin_client, export_world):
    package, _ = _package_with_volume(export_world)
    _, other_volume = _package_with_volume(export_world)

    response = admin_client.get(_url(export_world, f"packages/{package.id}/volume?volume={other_volume.id}"))

    assert response.status_code == 404


def test_an_expired_package_is_not_downloaded(admin_client, export_world):
    package, _ = _package_with_volume(export_world)
    package.expires_at = utcnow() - timedelta(minutes=1)
    db.session.commit()

    response = admin_client.get(_url(export_world, f"packages/{package.id}/manifest"))

    assert response.status_code == 410
    assert "This package has expired" in response.get_data(as_text=True)


# Early deletion


def test_early_deletion_asks_for_confirmation_then_removes_the_bytes(admin_client, export_world):
    package, volume = _package_with_volume(export_world)
    url = _url(export_world, f"packages/{package.id}/delete")
    assert "Delete package" in admin_client.get(url).get_data(as_text=True)

    unconfirmed = admin_client.post(url, data={})
    assert unconfirmed.status_code == 400
    assert "Tick the box to confirm" in unconfirmed.get_data(as_text=True)
    assert db.session.get(ExportPackage, package.id, populate_existing=True).status == "available"

    confirmed = admin_client.post(url, data={"confirm": "y"})

    assert confirmed.status_code == 302
    assert db.session.get(ExportPackage, package.id, populate_existing=True).status == "deleted"
    assert get_storage().list_keys(package.prefix) == []
    page = admin_client.get(_url(export_world, f"packages/{package.id}")).get_data(as_text=True)
    assert "deleted" in page and "Delete now" not in page


def test_a_second_deletion_answers_with_a_message(admin_client, export_world):
    package, _ = _package_with_volume(export_world)
    url = _url(export_world, f"packages/{package.id}/delete")
    admin_client.post(url, data={"confirm": "y"})

    again = admin_client.post(url, data={"confirm": "y"})

    assert again.status_code == 409
    assert "cannot be deleted: it is already deleted" in again.get_data(as_text=True)


def test_the_delete_page_of_a_settled_package_says_why_it_cannot_be_deleted(admin_client, export_world):
    package, _ = _package_with_volume(export_world)
    package.status = "expired"
    db.session.commit()

    response = admin_client.get(_url(export_world, f"packages/{package.id}/delete"))

    assert response.status_code == 409
    assert "cannot be deleted: it is already expired" in response.get_data(as_text=True)


def test_a_plain_member_cannot_delete_a_package(client, auth, export_world):
    package, _ = _package_with_volume(export_world)
    auth.login(export_world.member.email)

    assert client.post(_url(export_world, f"packages/{package.id}/delete"), data={"confirm": "y"}).status_code == 404
    assert db.session.get(ExportPackage, package.id, populate_existing=True).status == "available"


# Bad input


@pytest.mark.parametrize("volume", ["", "abc", "-1", "0", "99999999999999999999", "1.5", "%00", "1;DROP"])
def test_a_bad_volume_parameter_answers_404(admin_client, export_world, volume):
    package, _ = _package_with_volume(export_world)

    assert admin_client.get(_url(export_world, f"packages/{package.id}/volume?volume={volume}")).status_code == 404


def test_a_volume_download_without_its_parameter_answers_404(admin_client, export_world):
    package, _ = _package_with_volume(export_world)

    assert admin_client.get(_url(export_world, f"packages/{package.id}/volume")).status_code == 404


@pytest.mark.parametrize(
    "tail",
    [
        "executions/99999999999999999999",
        "executions/99999999999999999999/live",
        "packages/99999999999999999999",
        "packages/99999999999999999999/manifest",
        "packages/0/delete",
    ],
)
def test_ids_beyond_the_database_range_answer_404(admin_client, export_world, tail):
    assert admin_client.get(_url(export_world, tail)).status_code == 404


@pytest.mark.parametrize(
    "form",
    [
        {"confirm": "\x00"},
        {"confirm": "y" * 100_000},
        {"confirm": ["y", "n"]},
        {"unknown": "=1+2"},
    ],
)
def test_odd_form_values_never_fail_with_500(admin_client, export_world, form):
    package, _ = _package_with_volume(export_world)
    execution = factories.make_execution(
        export_world.workspace, export_world.admin, status="failed", failure_code="internal"
    )

    responses = [
        admin_client.post(_url(export_world, f"packages/{package.id}/delete"), data=form),
        admin_client.post(_url(export_world, f"executions/{execution.id}/cancel"), data=form),
        admin_client.post(_url(export_world, "executions"), data=form),
    ]

    assert all(response.status_code < 500 for response in responses), [r.status_code for r in responses]


def test_export_now_needs_the_pages_csrf_token(csrf_app, export_world):
    client = csrf_app.test_client()
    login_page = client.get("/login").get_data(as_text=True)
    login_token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', login_page).group(1)
    client.post("/login", data={"email": export_world.admin.email, "password": "password", "csrf_token": login_token})

    refused = client.post(_url(export_world, "executions"))
    assert refused.status_code == 400
    assert db.session.scalars(select(ExportExecution)).all() == []

    page = client.get(_url(export_world)).get_data(as_text=True)
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    accepted = client.post(_url(export_world, "executions"), data={"csrf_token": token})
    assert accepted.status_code == 302
    assert len(db.session.scalars(select(ExportExecution)).all()) == 1
