"""A package's volumes and manifest at scale (issue 20, section 3): on S3 storage a redirect to a
presigned URL once the administrator and the package's availability are checked; in a storage
folder an answer to Range requests, checked the same way."""

from __future__ import annotations

import random
from datetime import timedelta

from app.extensions import db
from app.models.export_package import ExportPackage, ExportVolume
from app.models.types import utcnow
from app.storage import get_storage
from tests import factories
from tests.fixtures.s3 import fetch

VOLUME = random.Random(7).randbytes(150_000)
HALF = len(VOLUME) // 2
MANIFEST = b'{"package": "manifest"}'


def _stored_package(export_world) -> tuple[ExportPackage, ExportVolume]:
    """An available package whose volume and manifest are in the storage configured now."""
    package = factories.make_package(factories.make_execution(export_world.workspace, export_world.admin))
    get_storage().put_bytes(package.manifest_key, MANIFEST)
    return package, factories.make_stored_volume(package, VOLUME)


def _volume_url(export_world, package: ExportPackage, volume: ExportVolume) -> str:
    return f"/w/{export_world.workspace.id}/export/packages/{package.id}/volume?volume={volume.id}"


def _manifest_url(export_world, package: ExportPackage) -> str:
    return f"/w/{export_world.workspace.id}/export/packages/{package.id}/manifest"


# -- S3 storage ----------------------------------------------------------------------------------


def test_an_s3_volume_download_redirects_to_its_bytes_under_its_name(client, auth, export_world, app_on_s3):
    package, volume = _stored_package(export_world)
    auth.login(export_world.admin.email)

    response = client.get(_volume_url(export_world, package, volume))
    status, headers, body = fetch(response.headers["Location"])

    assert response.status_code == 303
    assert status == 200 and body == VOLUME
    assert headers["Content-Disposition"] == "attachment; filename=teams-0001.csv.zip"
    assert headers["Content-Type"] == "application/zip"


def test_an_s3_manifest_download_redirects_to_its_bytes(client, auth, export_world, app_on_s3):
    package, _ = _stored_package(export_world)
    auth.login(export_world.admin.email)

    response = client.get(_manifest_url(export_world, package))

    assert response.status_code == 303
    assert fetch(response.headers["Location"])[2] == MANIFEST


def test_an_s3_volume_is_not_redirected_for_a_plain_member(client, auth, export_world, app_on_s3):
    package, volume = _stored_package(export_world)
    auth.login(export_world.member.email)

    response = client.get(_volume_url(export_world, package, volume))

    assert response.status_code == 404
    assert "Location" not in response.headers


def test_an_expired_package_is_not_redirected(client, auth, export_world, app_on_s3):
    package, volume = _stored_package(export_world)
    package.expires_at = utcnow() - timedelta(minutes=1)
    db.session.commit()
    auth.login(export_world.admin.email)

    response = client.get(_volume_url(export_world, package, volume))

    assert response.status_code == 410
    assert "Location" not in response.headers


# -- a storage folder ------------------------------------------------------------------------------


def test_a_volume_resumes_with_a_range_request(client, auth, export_world):
    package, volume = _stored_package(export_world)
    auth.login(export_world.admin.email)
    first = client.get(_volume_url(export_world, package, volume))

    rest = client.get(
        _volume_url(export_world, package, volume),
        headers={"Range": f"bytes={HALF}-", "If-Range": first.headers["ETag"]},
    )

    assert first.headers["Accept-Ranges"] == "bytes"
    assert rest.status_code == 206
    assert first.data[:HALF] + rest.data == VOLUME


def test_a_range_request_for_a_volume_is_refused_to_a_plain_member(client, auth, export_world):
    package, volume = _stored_package(export_world)
    auth.login(export_world.member.email)

    response = client.get(_volume_url(export_world, package, volume), headers={"Range": f"bytes={HALF}-"})

    assert response.status_code == 404
    assert VOLUME[HALF : HALF + 64] not in response.data
