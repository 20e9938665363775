"""A webhook's `file.ready` message carries a link its receiver, a machine, follows with no sign-in
(issue 29, item 3): a signed token naming the run's destination delivery by its random nonce,
opened by the public download route while the file is kept and the destination is there and
turned on, counted on the destination delivery, the same on every attempt. A Slack channel's
link still needs sign-in.

The receiver is the real HTTP receiver on the loopback; it downloads over real HTTP from the app
served on the loopback, whose address is the PUBLIC_URL the links start with.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
import urllib.error
import urllib.request
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from flask import request, request_finished
from itsdangerous import URLSafeSerializer
from sqlalchemy import select, update

from app.domain.people.access import current_context
from app.extensions import db
from app.models import ExportFile
from app.models.schedule import RecipientDelivery, ScheduleDestination, ScheduleRun
from app.models.schedule_destination_delivery import DestinationDelivery
from app.models.types import utcnow
from app.observability.context import LOGGED_PATH
from app.services.destinations import registry
from app.services.pages.public_link_tokens import link_token
from app.services.schedules import destination_deliveries, public_links
from app.services.schedules.public_links import LinkInvalid
from app.services.schedules.schedule_runs import process_run
from app.storage import get_storage
from tests.fixtures.message_receiver import Receiver

INVALID_TEXT = "The link has expired or is no longer valid."


@pytest.fixture
def public_at_live_server(app, live_server, monkeypatch) -> str:
    """The app served on the loopback, and the links it makes pointing there."""
    settings = dataclasses.replace(app.config["SETTINGS"], public_url=live_server)
    monkeypatch.setitem(app.config, "SETTINGS", settings)
    return live_server


@dataclasses.dataclass
class Announced:
    run: ScheduleRun
    delivery_id: int
    destination_id: int
    export: ExportFile
    data: bytes
    url: str  # the link, as the signed message gave it
    message: dict


def _announced(run_scenario, receiver: Receiver, destination, name: str = "Hours to the payroll") -> Announced:
    """A run of a new schedule delivering to the destination alone, its message received."""
    schedule = run_scenario.make_schedule(recipients=(), name=name)
    db.session.add(ScheduleDestination(schedule_id=schedule.id, destination_id=destination.id, position=0))
    db.session.commit()
    run = run_scenario.admit(schedule)
    assert process_run(run.id) == "succeeded"
    delivery_id = db.session.scalars(select(DestinationDelivery.id).where(DestinationDelivery.run_id == run.id)).one()
    assert destination_deliveries.run_delivery(delivery_id) == "delivered"
    run = db.session.get_one(ScheduleRun, run.id, populate_existing=True)
    export = db.session.get_one(ExportFile, run.export_id)
    message = receiver.received[-1]
    assert message.signature_valid is not False
    body = message.json
    return Announced(
        run,
        delivery_id,
        destination.id,
        export,
        b"".join(get_storage().read_chunks(export.storage_key)),
        body["download"]["url"] if "download" in body else "",
        body,
    )


def _fetch(url: str, method: str = "GET") -> tuple[int, bytes]:
    """What a receiver's plain HTTP client gets: no cookie jar, no proxy, redirects not followed."""

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirects())
    try:
        with opener.open(urllib.request.Request(url, method=method), timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as answer:
        return answer.code, answer.read()


def _without_csrf_token(page: bytes) -> bytes:
    """A page without the form token every page carries, which differs between visitors."""
    return re.sub(rb'"X-CSRFToken": "[^"]*"', b"", page)


def _path(url: str) -> str:
    """The link's path, for the test client (the app in this process)."""
    return urlsplit(url).path


def _downloads(delivery_id: int) -> int:
    db.session.rollback()
    return db.session.get_one(DestinationDelivery, delivery_id, populate_existing=True).download_count


def _refused(url: str, status: int) -> None:
    answered, page = _fetch(url)
    assert answered == status
    assert INVALID_TEXT in page.decode()
    assert b"Traceback" not in page


def test_the_receiver_downloads_the_file_s_exact_bytes_by_the_message_s_link_without_signing_in(
    run_scenario, receiver, webhook_destination, public_at_live_server
):
    announced = _announced(run_scenario, receiver, webhook_destination(run_scenario.workspace))

    status, data = _fetch(announced.url)

    assert announced.url.startswith(f"{public_at_live_server}/d/")
    assert status == 200
    assert data == announced.data
    assert hashlib.sha256(data).hexdigest() == announced.message["file"]["sha256"]
    assert announced.message["download"]["expires_at"] == announced.export.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_link_names_the_delivery_by_its_nonce_never_its_id(run_scenario, receiver, webhook_destination):
    announced = _announced(run_scenario, receiver, webhook_destination(run_scenario.workspace))
    nonce = db.session.get_one(DestinationDelivery, announced.delivery_id).link_nonce

    token = _path(announced.url).removeprefix("/d/")
    assert token == link_token(nonce, "destination_download")
    # What the token carries, read without its signature: the nonce alone.
    assert URLSafeSerializer("any key").loads_unsafe(token)[1] == nonce


def test_a_download_is_counted_once_on_the_destination_delivery_and_a_head_is_not(
    run_scenario, receiver, webhook_destination, public_at_live_server
):
    announced = _announced(run_scenario, receiver, webhook_destination(run_scenario.workspace))

    assert _fetch(announced.url, "HEAD")[0] == 200
    assert _downloads(announced.delivery_id) == 0
    assert _fetch(announced.url)[0] == 200

    assert _downloads(announced.delivery_id) == 1
    assert db.session.get_one(DestinationDelivery, announced.delivery_id).last_downloaded_at is not None
    assert db.session.scalars(select(RecipientDelivery.download_count)).all() == []


def test_the_link_opens_until_the_moment_its_message_says_it_expires(run_scenario, receiver, webhook_destination):
    announced = _announced(run_scenario, receiver, webhook_destination(run_scenario.workspace))
    token = _path(announced.url).removeprefix("/d/")
    expires_at = announced.export.expires_at

    assert public_links.open_delivered_file(token, expires_at - timedelta(seconds=1)).delivery_id == (
        announced.delivery_id
    )
    with pytest.raises(LinkInvalid) as refused:
        public_links.open_delivered_file(token, expires_at)
    assert refused.value.gone is True


def test_the_link_is_gone_once_the_file_expired(run_scenario, receiver, webhook_destination, public_at_live_server):
    announced = _announced(run_scenario, receiver, webhook_destination(run_scenario.workspace))
    db.session.execute(
        update(ExportFile)
        .where(ExportFile.id == announced.export.id)
        .values(expires_at=utcnow() - timedelta(minutes=1))
    )
    db.session.commit()

    _refused(announced.url, 410)
    assert _downloads(announced.delivery_id) == 0


def test_removing_the_destination_revokes_its_link(run_scenario, receiver, webhook_destination, public_at_live_server):
    destination = webhook_destination(run_scenario.workspace)
    announced = _announced(run_scenario, receiver, destination)
    admin = current_context(run_scenario.workspace.id, run_scenario.owner.id)

    registry.remove(admin, destination)

    _refused(announced.url, 410)


def test_turning_the_destination_off_stops_its_link_opening(
    run_scenario, receiver, webhook_destination, public_at_live_server
):
    destination = webhook_destination(run_scenario.workspace)
    announced = _announced(run_scenario, receiver, destination)
    admin = current_context(run_scenario.workspace.id, run_scenario.owner.id)

    registry.set_enabled(admin, destination, False)

    _refused(announced.url, 410)
    assert _downloads(announced.delivery_id) == 0


def test_a_forged_or_damaged_token_is_the_email_link_s_404_page(
    run_scenario, receiver, webhook_destination, public_at_live_server
):
    announced = _announced(run_scenario, receiver, webhook_destination(run_scenario.workspace))
    damaged = announced.url[:-3] + ("AAA" if not announced.url.endswith("AAA") else "BBB")
    email_status, email_page = _fetch(f"{public_at_live_server}/d/not-a-token")
    status, page = _fetch(damaged)

    assert (status, _without_csrf_token(page)) == (email_status, _without_csrf_token(email_page))
    assert status == 404 and INVALID_TEXT in page.decode()
    assert _downloads(announced.delivery_id) == 0


def test_a_token_of_another_purpose_for_the_nonce_opens_nothing(client, run_scenario, receiver, webhook_destination):
    announced = _announced(run_scenario, receiver, webhook_destination(run_scenario.workspace))
    nonce = db.session.get_one(DestinationDelivery, announced.delivery_id).link_nonce

    for other in (f"/d/{link_token(nonce, 'download')}", f"/u/{link_token(nonce, 'unsubscribe')}"):
        answer = client.get(other)
        assert answer.status_code == 404 and INVALID_TEXT in answer.get_data(as_text=True)
    webhook_token = _path(announced.url).removeprefix("/d/")
    assert client.get(f"/u/{webhook_token}").status_code == 404
    assert _downloads(announced.delivery_id) == 0


def test_a_slack_delivery_s_nonce_opens_nothing_by_a_webhook_token(client, run_scenario, receiver, slack_destination):
    announced = _announced(run_scenario, receiver, slack_destination(run_scenario.workspace))
    nonce = db.session.get_one(DestinationDelivery, announced.delivery_id).link_nonce

    assert client.get(f"/d/{link_token(nonce, 'destination_download')}").status_code == 404


def test_each_link_opens_its_own_run_s_file_only(client, run_scenario, receiver, webhook_destination):
    destination = webhook_destination(run_scenario.workspace)
    first = _announced(run_scenario, receiver, destination)
    second = _announced(run_scenario, receiver, destination, name="Hours to the pipeline")
    get_storage().put_bytes(second.export.storage_key, b"the second run's rows")

    assert client.get(_path(first.url)).data == first.data
    assert client.get(_path(second.url)).data == b"the second run's rows"


def test_the_link_is_the_same_on_a_retried_attempt_and_opens(client, run_scenario, receiver, webhook_destination):
    destination = webhook_destination(run_scenario.workspace)
    schedule = run_scenario.make_schedule(recipients=())
    db.session.add(ScheduleDestination(schedule_id=schedule.id, destination_id=destination.id, position=0))
    db.session.commit()
    run = run_scenario.admit(schedule)
    assert process_run(run.id) == "succeeded"
    delivery_id = db.session.scalars(select(DestinationDelivery.id)).one()
    receiver.status = 503
    assert destination_deliveries.run_delivery(delivery_id) == "retry_later"
    receiver.status = 200

    assert destination_deliveries.run_delivery(delivery_id, now=utcnow() + timedelta(minutes=2)) == "delivered"

    first, retried = receiver.received
    assert first.headers["Rhythm-Message-Id"] == retried.headers["Rhythm-Message-Id"]
    assert first.json["download"]["url"] == retried.json["download"]["url"]
    assert client.get(_path(retried.json["download"]["url"])).status_code == 200


def test_the_link_s_token_is_in_no_log_line_and_the_access_log_names_the_route(
    app, client, run_scenario, receiver, webhook_destination, caplog
):
    caplog.set_level(logging.DEBUG)
    announced = _announced(run_scenario, receiver, webhook_destination(run_scenario.workspace))
    token = _path(announced.url).removeprefix("/d/")
    logged_paths: list[str | None] = []

    def note_logged_path(sender, response, **extra) -> None:
        logged_paths.append(request.environ.get(LOGGED_PATH))

    with request_finished.connected_to(note_logged_path, app):
        opened = client.get(f"/d/{token}")
        refused = client.get(f"/d/{token[:-3]}xyz")

    assert opened.status_code == 200 and refused.status_code == 404
    assert logged_paths == ["/d/<token>", "/d/<token>"]
    assert all(token not in record.getMessage() and token[:-3] not in record.getMessage() for record in caplog.records)


def test_a_slack_channel_s_link_still_needs_sign_in(run_scenario, receiver, slack_destination):
    announced = _announced(run_scenario, receiver, slack_destination(run_scenario.workspace))

    expected = f"/w/{run_scenario.workspace.id}/files/{announced.export.id}/download|Download it>"
    assert expected in announced.message["text"]
    assert "/d/" not in announced.message["text"]
