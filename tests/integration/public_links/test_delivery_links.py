"""The public pages behind a schedule email's links: the download and the unsubscribe (issue 9, item 11).

Nobody signs in: the signed token names the recipient delivery. The file downloads while it has
not expired and, for a person recipient, while that person is still a member (INV-04); every
other case is one plain invalid-link page, 404 or 410.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from datetime import timedelta

import pytest
from markupsafe import escape
from sqlalchemy import delete, func, select, update

from app.domain.files import export_file
from app.extensions import db
from app.models import ExportFile, Membership, RecipientDelivery, ScheduleUnsubscribe
from app.models.types import utcnow
from app.services.pages.public_link_tokens import link_token
from app.storage import get_storage
from tests import factories

CONTENT = "id,note\r\n1,Zoë =1+2\r\n".encode()
INVALID_TEXT = "The link has expired or is no longer valid."


def _succeeded_file(query, requester, content: bytes = CONTENT, **overrides) -> ExportFile:
    export = factories.make_export(query, requester, **overrides)
    attempt = export_file.start(export.id)
    get_storage().put_bytes(export.storage_key, content)
    export_file.succeed(export.id, attempt, size_bytes=len(content), row_count=1, retention_days=30)
    db.session.refresh(export)
    return export


@pytest.fixture
def delivered(world):
    """A schedule of the member's that ran, made a file, and sent it to the admin (a person) and an address."""
    query = factories.make_query(world.workspace, world.member)
    export = _succeeded_file(query, world.member, file_name="Heures équipe.csv")
    schedule = factories.make_schedule(query, world.member, name="<b>Hours</b> & {{ 7*7 }}")
    run = factories.make_run(schedule, export)
    to_person = factories.make_delivery(run, person=world.admin)
    to_address = factories.make_delivery(run, email="Partner@Example.test")
    return world, schedule, run, export, to_person, to_address


def _download_url(delivery: RecipientDelivery) -> str:
    return f"/d/{link_token(delivery.link_nonce, 'download')}"


def _unsubscribe_url(delivery: RecipientDelivery) -> str:
    return f"/u/{link_token(delivery.link_nonce, 'unsubscribe')}"


def _counted(delivery: RecipientDelivery) -> tuple[int, object]:
    db.session.expire_all()
    row = db.session.get(RecipientDelivery, delivery.id)
    return row.download_count, row.last_downloaded_at


def _assert_invalid_page(response, status: int) -> None:
    page = response.get_data(as_text=True)
    assert response.status_code == status
    assert INVALID_TEXT in page
    assert "Traceback" not in page
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_a_download_link_answers_the_file_without_signing_in(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    response = client.get(_download_url(to_address))
    assert response.status_code == 200
    assert response.data == CONTENT
    assert response.headers["Content-Disposition"].startswith("attachment;")
    assert "filename*=UTF-8''Heures%20%C3%A9quipe.csv" in response.headers["Content-Disposition"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Content-Security-Policy"]


def test_each_download_is_counted_on_the_recipient_row(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    before = utcnow()
    client.get(_download_url(to_person))
    client.get(_download_url(to_person))
    count, last = _counted(to_person)
    assert count == 2
    assert last is not None and last >= before
    assert _counted(to_address) == (0, None)


def test_a_head_request_does_not_count_as_a_download(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    assert client.head(_download_url(to_person)).status_code == 200
    assert _counted(to_person) == (0, None)


def test_a_forged_token_shows_the_invalid_link_page_with_404(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    token = link_token(to_person.link_nonce, "download")
    forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    _assert_invalid_page(client.get(f"/d/{forged}"), 404)
    _assert_invalid_page(client.get("/d/not-a-token"), 404)
    assert _counted(to_person) == (0, None)


def test_a_token_signed_with_another_secret_is_refused(client, app, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    from itsdangerous import URLSafeSerializer

    other = URLSafeSerializer("another-secret", salt="schedule-delivery-download").dumps(to_person.link_nonce)
    _assert_invalid_page(client.get(f"/d/{other}"), 404)


def test_an_unsubscribe_token_does_not_open_the_download(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    token = link_token(to_person.link_nonce, "unsubscribe")
    _assert_invalid_page(client.get(f"/d/{token}"), 404)


def test_a_revoked_link_is_not_found(client, delivered):
    """Changing the delivery's nonce revokes every link made from the old one."""
    world, schedule, run, export, to_person, to_address = delivered
    url = _download_url(to_person)
    db.session.execute(update(RecipientDelivery).where(RecipientDelivery.id == to_person.id).values(link_nonce="new"))
    db.session.commit()
    _assert_invalid_page(client.get(url), 404)


def test_an_expired_file_is_gone(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    db.session.execute(
        update(ExportFile).where(ExportFile.id == export.id).values(expires_at=utcnow() - timedelta(seconds=1))
    )
    db.session.commit()
    _assert_invalid_page(client.get(_download_url(to_address)), 410)
    assert _counted(to_address) == (0, None)


def test_a_person_removed_from_the_workspace_gets_the_invalid_link_page(client, delivered):
    """INV-04: the link of a person recipient opens only while that person is a member."""
    world, schedule, run, export, to_person, to_address = delivered
    db.session.execute(
        delete(Membership).where(Membership.person_id == world.admin.id, Membership.workspace_id == world.workspace.id)
    )
    db.session.commit()
    _assert_invalid_page(client.get(_download_url(to_person)), 410)
    assert _counted(to_person) == (0, None)
    assert client.get(_download_url(to_address)).status_code == 200


def test_a_suspended_workspace_opens_no_link(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    world.workspace.status = "suspended"
    db.session.commit()
    _assert_invalid_page(client.get(_download_url(to_address)), 410)


def test_a_file_missing_from_storage_is_gone(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    get_storage().delete(export.storage_key)
    _assert_invalid_page(client.get(_download_url(to_person)), 410)
    assert _counted(to_person) == (0, None)


def test_a_run_without_a_file_has_nothing_to_download(client, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    run = factories.make_run(schedule, status="failed", failure_code="internal")
    delivery = factories.make_delivery(run, status="failed")
    _assert_invalid_page(client.get(_download_url(delivery)), 404)


def test_a_file_still_being_made_has_nothing_to_download(client, world):
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    run = factories.make_run(factories.make_schedule(query, world.member), export, status="running")
    delivery = factories.make_delivery(run, status="pending", submission_id=None)
    _assert_invalid_page(client.get(_download_url(delivery)), 404)


def _csrf_token(html: str) -> str:
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html)
    assert match, "no CSRF token on the page"
    return match.group(1)


def _unsubscribes() -> list[tuple[int, str]]:
    db.session.rollback()
    return list(db.session.execute(select(ScheduleUnsubscribe.schedule_id, ScheduleUnsubscribe.address_key)))


def test_the_unsubscribe_link_shows_a_confirm_page_and_records_nothing_yet(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    response = client.get(_unsubscribe_url(to_address))
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert str(escape(schedule.name)) in page and "<b>Hours</b>" not in page
    assert '<button type="submit"' in page and 'name="csrf_token"' in page
    assert _unsubscribes() == []


def test_confirming_records_the_unsubscribe_once_however_often_it_is_sent(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    first = client.post(_unsubscribe_url(to_address))
    second = client.post(_unsubscribe_url(to_address))
    assert first.status_code == second.status_code == 200
    assert "You are unsubscribed" in first.get_data(as_text=True)
    assert "You are already unsubscribed" in second.get_data(as_text=True)
    assert _unsubscribes() == [(schedule.id, "partner@example.test")]


def test_a_reopened_unsubscribe_link_says_already_unsubscribed_and_asks_nothing(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    client.post(_unsubscribe_url(to_address))

    reopened = client.get(_unsubscribe_url(to_address)).get_data(as_text=True)

    assert "You are already unsubscribed" in reopened
    assert '<button type="submit"' not in reopened
    assert _unsubscribes() == [(schedule.id, "partner@example.test")]


def test_a_person_recipient_is_unsubscribed_by_their_person_key(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    client.post(_unsubscribe_url(to_person))
    assert _unsubscribes() == [(schedule.id, f"person:{world.admin.id}")]


def test_one_click_unsubscribe_works_without_cookie_or_csrf_token(csrf_app, delivered):
    """RFC 8058: the mail client POSTs List-Unsubscribe=One-Click with no session and no token."""
    world, schedule, run, export, to_person, to_address = delivered
    client = csrf_app.test_client(use_cookies=False)
    response = client.post(
        _unsubscribe_url(to_address),
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 200
    assert _unsubscribes() == [(schedule.id, "partner@example.test")]


def test_the_confirm_form_needs_its_csrf_token(csrf_app, delivered):
    """Only the one-click POST goes without the token; the page's own form is checked."""
    world, schedule, run, export, to_person, to_address = delivered
    client = csrf_app.test_client()
    url = _unsubscribe_url(to_address)
    refused = client.post(url, data={"anything": "else"})
    assert refused.status_code == 400
    assert _unsubscribes() == []
    token = _csrf_token(client.get(url).get_data(as_text=True))
    assert client.post(url, data={"csrf_token": token}).status_code == 200
    assert _unsubscribes() == [(schedule.id, "partner@example.test")]


def test_other_routes_still_refuse_a_post_without_the_csrf_token(csrf_app, delivered):
    """The exemption is this one route's: signing out without the token is still refused."""
    client = csrf_app.test_client()
    assert client.post("/logout").status_code == 400


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_forged_or_other_purpose_unsubscribe_token_is_not_found(client, delivered, method):
    world, schedule, run, export, to_person, to_address = delivered
    download_token = link_token(to_address.link_nonce, "download")
    for token in ("forged", download_token, download_token[:-2] + "xx"):
        response = client.open(
            f"/u/{token}",
            method=method,
            data="List-Unsubscribe=One-Click",
            content_type="application/x-www-form-urlencoded",
        )
        _assert_invalid_page(response, 404)
    assert _unsubscribes() == []


def test_unsubscribing_works_after_the_file_expired(client, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    db.session.execute(
        update(ExportFile).where(ExportFile.id == export.id).values(expires_at=utcnow() - timedelta(days=1))
    )
    db.session.commit()
    assert client.post(_unsubscribe_url(to_address)).status_code == 200
    assert db.session.scalar(select(func.count()).select_from(ScheduleUnsubscribe)) == 1


def test_concurrent_downloads_are_all_counted(app, delivered):
    """The count is one UPDATE adding one, so downloads at the same moment never overwrite each other."""
    from concurrent.futures import ThreadPoolExecutor

    world, schedule, run, export, to_person, to_address = delivered
    url = _download_url(to_address)

    def download_five_times(_: int) -> list[int]:
        client = app.test_client()
        return [client.get(url).status_code for _ in range(5)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = [status for batch in pool.map(download_five_times, range(8)) for status in batch]
    assert statuses == [200] * 40
    assert _counted(to_address)[0] == 40


def _over_http(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> int:
    """The status of one real HTTP request (a mail scanner's probe), never through a proxy, redirects not followed."""

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirects())
    try:
        with opener.open(urllib.request.Request(url, method=method, headers=headers or {}), timeout=10) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as answer:
        return answer.code


def test_a_mail_scanners_head_over_http_is_not_counted_and_a_get_is(live_server, delivered):
    world, schedule, run, export, to_person, to_address = delivered
    url = live_server + _download_url(to_person)

    assert _over_http(url, "HEAD") == 200
    assert _counted(to_person)[0] == 0
    assert _over_http(url) == 200
    assert _counted(to_person)[0] == 1


def test_a_head_over_http_on_s3_storage_is_not_counted(live_server, app_on_s3, world):
    query = factories.make_query(world.workspace, world.member)
    export = _succeeded_file(query, world.member)
    to_person = factories.make_delivery(
        factories.make_run(factories.make_schedule(query, world.member), export), person=world.admin
    )
    url = live_server + _download_url(to_person)

    assert _over_http(url, "HEAD") == 303
    assert _counted(to_person)[0] == 0
