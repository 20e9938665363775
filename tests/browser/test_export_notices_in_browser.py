"""An export notice to a notification person who is not an administrator links to a page that
person may open (the notice's summary, without actions), not to the package's page, which is the
administrators'; an administrator's still opens the package."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from app.communications import Mailer
from app.models.export_notice import NoticeKind
from app.services.workspace_export import export_notices
from tests import factories
from tests.fixtures.browser import sign_in

pytestmark = pytest.mark.browser

LINK = re.compile(r"https?://\S+/w/\d+/export/\S+")


@pytest.fixture
def mail_to_smtp_server(app, smtp_settings):
    previous = app.extensions.get("rhythm_mailer")
    app.extensions["rhythm_mailer"] = Mailer(smtp_settings)
    yield
    app.extensions["rhythm_mailer"] = previous


def _link_sent_to(smtp_server, address: str) -> str:
    (message,) = [m for m in smtp_server.messages if address in m.recipients]
    return LINK.search(message.part("text/plain")).group(0)


def test_a_notification_person_who_is_not_an_administrator_opens_the_notices_summary(
    world, live_server, browser_page, smtp_server, mail_to_smtp_server
):
    snapshot = factories.settings_snapshot(notify_person_ids=[world.member.id])
    execution = factories.make_execution(world.workspace, settings_snapshot=snapshot)
    package = factories.make_package(execution, row_count=1234)
    export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id)

    member_link = _link_sent_to(smtp_server, world.member.email)
    assert f"/export/packages/{package.id}" not in member_link
    assert _link_sent_to(smtp_server, world.admin.email).endswith(f"/export/packages/{package.id}")

    page = browser_page
    sign_in(page, live_server, world.member.email)
    response = page.goto(live_server + urlsplit(member_link).path)

    assert response.status == 200
    assert page.get_by_role("heading", level=1).text_content() == "Your workspace export is ready"
    assert "1,234" in (page.locator("#notice-facts").text_content() or "")
    assert page.get_by_role("button").filter(has_text=re.compile("Delete|Deliver|Download")).count() == 0
