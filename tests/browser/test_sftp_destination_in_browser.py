"""An SFTP destination added in Chromium: only the SFTP fields show once that kind is chosen, the
first Test connection (through htmx) shows the server's host key fingerprint, pinning it lets
the next test connect to a real SSH server on the loopback."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.destinations.sftp import fingerprint
from app.models.export_destination import ExportDestination
from app.security.credentials import decrypt_secret
from tests.fixtures.browser import fresh, htmx_swap, sign_in


@pytest.mark.browser
def test_an_administrator_adds_an_sftp_destination_pins_its_host_key_and_connects(
    world, live_server, browser_page, browser_console_errors, sftp_server
):
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/destinations")

    page.get_by_label("SFTP server").check()
    assert page.get_by_label("Bucket name").is_hidden()
    assert page.locator("#private_key").is_hidden()  # a password login is chosen
    page.get_by_label("Name", exact=True).fill("Payroll SFTP")
    page.locator("#host").fill("127.0.0.1")
    page.get_by_label("Port", exact=True).fill(str(sftp_server.port))
    page.get_by_label("User name").fill(sftp_server.user)
    page.locator("#password").fill(sftp_server.password)
    page.get_by_label("Destination path").fill("inbound/rhythm")
    page.get_by_role("button", name="Add destination").click()
    page.wait_for_url(re.compile(r"/export/destinations/\d+$"))
    destination = fresh(select(ExportDestination)).scalar_one()
    assert decrypt_secret(destination.secret_ciphertext) == sftp_server.password
    assert sftp_server.password not in page.content()
    page.get_by_text("Not pinned: nothing is delivered until it is.").wait_for()

    shown = fingerprint(sftp_server.host_key)
    htmx_swap(page, lambda: page.get_by_role("button", name="Test connection").click())
    page.locator("#offered-host-key", has_text=shown).wait_for()
    assert sftp_server.files() == {}

    page.get_by_role("button", name="Pin this host key").click()
    page.get_by_text("The server's host key is pinned").wait_for()
    page.locator("#pinned-host-key", has_text=shown).wait_for()
    htmx_swap(page, lambda: page.get_by_role("button", name="Test connection").click())
    page.locator("#test-result", has_text="Connected.").wait_for()
    assert fresh(select(ExportDestination.host_key)).scalar_one() == sftp_server.host_key
    assert sftp_server.password not in page.content()
    assert browser_console_errors == []
