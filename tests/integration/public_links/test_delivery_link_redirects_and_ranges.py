"""An email's public download link at scale (issue 20, section 3): on S3 storage a redirect to a
presigned URL after the link's checks, counted once; in a storage folder Range requests, so
`curl -C -` resumes a broken download, and a resumed piece is not counted as another download."""

from __future__ import annotations

import random
import subprocess
from datetime import timedelta

from sqlalchemy import update

from app.extensions import db
from app.models import ExportFile, RecipientDelivery
from app.models.types import utcnow
from app.services.pages.public_link_tokens import link_token
from tests import factories
from tests.fixtures.s3 import fetch

CONTENT = random.Random(9).randbytes(200_000)
HALF = len(CONTENT) // 2


def _delivered(world) -> RecipientDelivery:
    """A schedule's run whose file, stored in the storage configured now, was sent to an address."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_stored_file(query, world.member, CONTENT, file_name="Heures équipe.csv")
    run = factories.make_run(factories.make_schedule(query, world.member), export)
    return factories.make_delivery(run, email="partner@example.test")


def _link(delivery: RecipientDelivery) -> str:
    return f"/d/{link_token(delivery.link_nonce, 'download')}"


def _download_count(delivery: RecipientDelivery) -> int:
    db.session.expire_all()
    return db.session.get(RecipientDelivery, delivery.id).download_count


def _curl_resume(url: str, into) -> None:
    """`curl -C -` as a person resuming a download: it asks for the bytes after those already in `into`."""
    subprocess.run(
        ["curl", "--silent", "--show-error", "--fail", "--noproxy", "*", "--location", "-C", "-", "-o", str(into), url],
        check=True,
        timeout=60,
    )


# -- S3 storage ----------------------------------------------------------------------------------


def test_an_s3_link_redirects_to_the_stored_bytes_and_counts_one_download(world, client, app_on_s3):
    delivery = _delivered(world)
    response = client.get(_link(delivery))
    status, headers, body = fetch(response.headers["Location"])

    assert response.status_code == 303
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert status == 200 and body == CONTENT
    assert headers["Content-Disposition"] == (
        "attachment; filename=\"Heures equipe.csv\"; filename*=UTF-8''Heures%20%C3%A9quipe.csv"
    )
    assert _download_count(delivery) == 1


def test_an_expired_s3_link_is_refused_without_a_redirect_or_a_count(world, client, app_on_s3):
    delivery = _delivered(world)
    run_file = db.session.get(ExportFile, delivery.run.export_id)
    db.session.execute(
        update(ExportFile).where(ExportFile.id == run_file.id).values(expires_at=utcnow() - timedelta(minutes=1))
    )
    db.session.commit()

    response = client.get(_link(delivery))

    assert response.status_code == 410
    assert "Location" not in response.headers
    assert _download_count(delivery) == 0


def test_curl_resumes_a_broken_s3_download_through_the_redirect(world, live_server, app_on_s3, tmp_path):
    delivery = _delivered(world)
    target = tmp_path / "download.csv"
    target.write_bytes(CONTENT[:HALF])

    _curl_resume(live_server + _link(delivery), target)

    assert target.read_bytes() == CONTENT


# -- a storage folder ------------------------------------------------------------------------------


def test_a_range_from_a_later_byte_answers_those_bytes_and_is_not_another_download(world, client):
    delivery = _delivered(world)
    client.get(_link(delivery))

    rest = client.get(_link(delivery), headers={"Range": f"bytes={HALF}-"})

    assert rest.status_code == 206 and rest.data == CONTENT[HALF:]
    assert _download_count(delivery) == 1


def test_a_range_from_the_first_byte_is_a_new_download(world, client):
    delivery = _delivered(world)
    response = client.get(_link(delivery), headers={"Range": "bytes=0-999"})

    assert response.status_code == 206 and response.data == CONTENT[:1000]
    assert _download_count(delivery) == 1


def test_curl_resumes_a_broken_download_counted_once(world, live_server, tmp_path):
    delivery = _delivered(world)
    target = tmp_path / "download.csv"
    _curl_resume(live_server + _link(delivery), target)
    with open(target, "r+b") as broken:  # the connection dropped half way
        broken.truncate(HALF)

    _curl_resume(live_server + _link(delivery), target)

    assert target.read_bytes() == CONTENT
    assert _download_count(delivery) == 1


def test_a_range_request_on_a_link_that_no_longer_opens_is_refused(client, world):
    delivery = _delivered(world)
    db.session.execute(update(ExportFile).values(expires_at=utcnow() - timedelta(minutes=1)))
    db.session.commit()

    response = client.get(_link(delivery), headers={"Range": f"bytes={HALF}-"})

    assert response.status_code == 410
    assert CONTENT[HALF : HALF + 64] not in response.data
