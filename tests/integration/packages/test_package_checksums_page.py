"""The package page shows how to verify a copy with `sha256sum -c` and serves SHA256SUMS."""

from __future__ import annotations

import pytest

from app.services.workspace_export.package_keys import checksums_key
from app.services.workspace_export.package_production import run_execution
from tests import factories
from tests.fixtures.s3 import fetch
from tests.integration.packages.package_reading import package_of


@pytest.fixture
def admin_client(client, auth, export_world):
    auth.login(export_world.admin.email)
    return client


def _produced(export_world, format: str = "parquet"):
    factories.make_team(export_world.workspace)
    execution = factories.make_execution(
        export_world.workspace, settings_snapshot=factories.settings_snapshot(datasets=["teams"], format=format)
    )
    assert run_execution(execution.id) == "succeeded"
    return package_of(execution.id)


def _url(export_world, tail: str) -> str:
    return f"/w/{export_world.workspace.id}/export/{tail}"


def test_the_package_page_shows_the_verify_command_and_the_format(admin_client, export_world, isolated_storage):
    package = _produced(export_world)

    page = admin_client.get(_url(export_world, f"packages/{package.id}")).get_data(as_text=True)

    assert "<code>sha256sum -c SHA256SUMS</code>" in page
    assert f'href="/w/{export_world.workspace.id}/export/packages/{package.id}/checksums"' in page
    assert "Parquet, typed columns, zstd-compressed" in page


def test_sha256sums_downloads_as_stored(admin_client, export_world, isolated_storage):
    package = _produced(export_world, "csv")

    response = admin_client.get(_url(export_world, f"packages/{package.id}/checksums"))

    stored = b"".join(isolated_storage.read_chunks(checksums_key(package.prefix)))
    assert response.status_code == 200 and response.data == stored
    assert response.data.decode().endswith("  teams/teams-00001.csv.zip\n")
    assert response.headers["Content-Disposition"] == "attachment; filename=SHA256SUMS"
    assert response.mimetype == "text/plain"


def test_a_package_made_before_sha256sums_says_so(admin_client, export_world, isolated_storage):
    package = _produced(export_world, "csv")
    isolated_storage.delete(checksums_key(package.prefix))

    response = admin_client.get(_url(export_world, f"packages/{package.id}/checksums"))

    assert response.status_code == 410
    assert "made before packages carried SHA256SUMS" in response.get_data(as_text=True)


def test_a_plain_member_cannot_download_the_checksums(client, auth, export_world, isolated_storage):
    package = _produced(export_world, "csv")
    auth.login(export_world.member.email)

    assert client.get(_url(export_world, f"packages/{package.id}/checksums")).status_code == 404


def test_sha256sums_from_s3_storage_names_its_charset_once(admin_client, export_world, app_on_s3):
    package = _produced(export_world, "csv")

    response = admin_client.get(_url(export_world, f"packages/{package.id}/checksums"))
    status, headers, body = fetch(response.headers["Location"])

    assert response.status_code == 303 and status == 200
    assert headers["Content-Type"] == "text/plain; charset=utf-8"


def test_sha256sums_from_a_storage_folder_names_its_charset_once(admin_client, export_world, isolated_storage):
    package = _produced(export_world, "csv")

    response = admin_client.get(_url(export_world, f"packages/{package.id}/checksums"))

    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
