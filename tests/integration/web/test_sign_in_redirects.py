"""After sign-in `next` leads only to a path on this site, judged as the browser reads the Location header."""

from __future__ import annotations

import pytest

# Each would lead the browser to another host (or break the header) if passed on as written.
OFF_SITE_TARGETS = [
    "/\t/evil.example",  # the browser drops the tab: //evil.example
    "/\n/x",  # the browser drops the newline; a raw newline cannot go in a header at all
    "/\r/evil.example",
    "\\\\evil.example",  # the browser reads \ as /
    "/\\evil.example",
    "\\/evil.example",
    " //evil.example",  # leading spaces and C0 controls are trimmed
    "\x01//evil.example",
    "//evil.example",
    "https://evil.example/",
    "javascript:alert(1)",
    "evil.example",
    "/ok\x00/then",
]


@pytest.mark.parametrize("target", OFF_SITE_TARGETS, ids=repr)
def test_an_off_site_next_leads_to_the_landing_page(client, world, target):
    """Sign-in succeeds and answers 302 to the landing page, never to another host and never 500."""
    response = client.post(
        "/login", query_string={"next": target}, data={"email": world.member.email, "password": "password"}
    )
    assert response.status_code == 302
    assert response.headers["Location"] == "/"


def test_a_same_site_next_is_followed(client, world):
    """A path on this site, with its query string, is where sign-in leads."""
    target = f"/w/{world.workspace.id}/files/?view=list"
    response = client.post(
        "/login", query_string={"next": target}, data={"email": world.member.email, "password": "password"}
    )
    assert response.headers["Location"] == target


def test_a_next_with_spaces_and_letters_outside_ascii_is_percent_encoded(client, world):
    """The browser would encode them; the Location header carries them encoded, on this site."""
    response = client.post(
        "/login", query_string={"next": "/w/é x"}, data={"email": world.member.email, "password": "password"}
    )
    assert response.status_code == 302
    assert response.headers["Location"] == "/w/%C3%A9%20x"
