"""A file's download at scale: on S3 storage a redirect to a presigned URL, so no web process streams
the bytes; in a storage folder an answer to HTTP Range requests, so a broken download resumes.
Access and expiry are checked before either, on every request (issue 20, section 3)."""

from __future__ import annotations

import random
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import update

from app.extensions import db
from app.models import ExportFile
from app.models.types import utcnow
from tests import factories
from tests.fixtures.s3 import fetch

# Larger than one storage read, and binary, so every byte's place is checked.
CONTENT = random.Random(20).randbytes(300_000)
HALF = len(CONTENT) // 2


def _stored_file(world, content: bytes = CONTENT, **overrides) -> ExportFile:
    query = factories.make_query(world.workspace, world.member)
    return factories.make_stored_file(query, world.member, content, **overrides)


def _download_url(world, export: ExportFile) -> str:
    return f"/w/{world.workspace.id}/files/{export.id}/download"


def _expire(export: ExportFile) -> None:
    db.session.execute(
        update(ExportFile).where(ExportFile.id == export.id).values(expires_at=utcnow() - timedelta(days=1))
    )
    db.session.commit()


# -- S3 storage: a redirect to the store --------------------------------------------------------


def test_an_s3_download_redirects_to_a_url_answering_the_stored_bytes_under_the_file_name(
    client, auth, world, app_on_s3
):
    export = _stored_file(world, file_name="Übersicht équipe.csv")
    auth.login(world.member.email)

    response = client.get(_download_url(world, export))
    status, headers, body = fetch(response.headers["Location"])

    assert response.status_code == 303
    assert CONTENT[:64] not in response.data  # the web process sends no byte of the file
    assert status == 200 and body == CONTENT
    assert headers["Content-Disposition"] == (
        "attachment; filename=\"Ubersicht equipe.csv\"; filename*=UTF-8''%C3%9Cbersicht%20%C3%A9quipe.csv"
    )
    assert headers["Content-Type"] == "text/csv; charset=utf-8"


def test_an_s3_download_url_is_valid_for_five_minutes_and_never_cached(client, auth, world, app_on_s3):
    export = _stored_file(world)
    auth.login(world.member.email)

    response = client.get(_download_url(world, export))

    assert parse_qs(urlsplit(response.headers["Location"]).query)["X-Amz-Expires"] == ["300"]
    assert "no-store" in response.headers["Cache-Control"]


@pytest.mark.environment(DOWNLOAD_URL_SECONDS="45")
def test_the_s3_download_url_lifetime_is_the_download_url_seconds_setting(client, auth, world, app_on_s3):
    export = _stored_file(world)
    auth.login(world.member.email)

    location = client.get(_download_url(world, export)).headers["Location"]

    assert parse_qs(urlsplit(location).query)["X-Amz-Expires"] == ["45"]


def test_an_s3_download_is_not_redirected_for_a_person_without_access(client, auth, world, app_on_s3):
    export = _stored_file(world)
    auth.login(world.admin.email)  # an administrator reads only their own files

    response = client.get(_download_url(world, export))

    assert response.status_code == 404
    assert "Location" not in response.headers


def test_an_expired_s3_file_is_not_redirected(client, auth, world, app_on_s3):
    export = _stored_file(world)
    _expire(export)
    auth.login(world.member.email)

    response = client.get(_download_url(world, export))

    assert response.status_code == 410
    assert "Location" not in response.headers


def test_an_s3_file_gone_from_the_bucket_answers_the_storage_page_not_a_redirect(client, auth, world, app_on_s3):
    export = _stored_file(world)
    app_on_s3.delete(export.storage_key)
    auth.login(world.member.email)

    response = client.get(_download_url(world, export))

    assert response.status_code == 503
    assert "Location" not in response.headers


# -- a storage folder: Range requests -----------------------------------------------------------


def test_a_folder_download_offers_ranges_with_its_validators(client, auth, world):
    export = _stored_file(world)
    auth.login(world.member.email)

    response = client.get(_download_url(world, export))

    assert response.status_code == 200 and response.data == CONTENT
    assert response.headers["Accept-Ranges"] == "bytes"
    assert response.headers["ETag"] and response.headers["Last-Modified"]


def test_a_range_request_answers_206_with_exactly_the_bytes_asked_for(client, auth, world):
    export = _stored_file(world)
    auth.login(world.member.email)

    response = client.get(_download_url(world, export), headers={"Range": f"bytes={HALF}-"})

    assert response.status_code == 206
    assert response.data == CONTENT[HALF:]
    assert response.headers["Content-Range"] == f"bytes {HALF}-{len(CONTENT) - 1}/{len(CONTENT)}"
    assert response.headers["Content-Disposition"] == f"attachment; filename={export.file_name}"


def test_a_broken_download_resumed_with_a_range_equals_the_file(client, auth, world):
    """The first part of a download that broke, then the rest asked for as a browser or `curl -C -`
    asks (If-Range with the first answer's ETag), make the whole file byte for byte."""
    export = _stored_file(world)
    auth.login(world.member.email)
    first = client.get(_download_url(world, export))
    received = first.data[:HALF]

    rest = client.get(
        _download_url(world, export), headers={"Range": f"bytes={len(received)}-", "If-Range": first.headers["ETag"]}
    )

    assert rest.status_code == 206
    assert received + rest.data == CONTENT


def test_a_range_request_is_refused_to_a_person_without_access(client, auth, world):
    export = _stored_file(world)
    auth.login(world.admin.email)

    response = client.get(_download_url(world, export), headers={"Range": f"bytes={HALF}-"})

    assert response.status_code == 404
    assert CONTENT[HALF : HALF + 64] not in response.data


def test_a_range_request_for_an_expired_file_is_refused(client, auth, world):
    export = _stored_file(world)
    _expire(export)
    auth.login(world.member.email)

    response = client.get(_download_url(world, export), headers={"Range": f"bytes={HALF}-"})

    assert response.status_code == 410
    assert CONTENT[HALF : HALF + 64] not in response.data
