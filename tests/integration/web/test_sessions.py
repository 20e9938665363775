"""Sessions end when they must: sign-out, a password change, removal from the last workspace.

A session cookie holds the person's session token; these events rotate it, so a copy of the
cookie taken before them (another browser, or one replayed by an attacker) no longer signs in.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Membership, Person, Workspace
from tests import factories


@dataclass
class Member:
    email: str
    workspace_id: int
    other_workspace_id: int


@pytest.fixture
def member(app) -> Member:
    """A member of one workspace, and another workspace, made outside any app context the requests share.

    Flask-Login keeps the loaded person on `g`; requests made inside one long-lived app context
    would share it and hide whether each request really checks its session.
    """
    with app.app_context():
        workspace = factories.make_workspace()
        other = factories.make_workspace()
        membership = factories.make_member(workspace)
        return Member(membership.person.email, workspace.id, other.id)


def _signed_in_client(app, email: str, password: str = factories.PASSWORD):
    client = app.test_client()
    response = client.post("/login", data={"email": email, "password": password})
    assert response.status_code == 302
    return client


def _replay(app, cookie_value: str):
    """A new client that sends only the copied session cookie."""
    client = app.test_client()
    client.set_cookie("session", cookie_value)
    return client


def test_a_session_cookie_replayed_after_sign_out_is_refused(app, member):
    """The cookie taken before sign-out leads to the sign-in page afterwards."""
    client = _signed_in_client(app, member.email)
    copied = client.get_cookie("session").value
    assert _replay(app, copied).get(f"/w/{member.workspace_id}/").status_code == 200
    client.post("/logout")
    replayed = _replay(app, copied).get(f"/w/{member.workspace_id}/")
    assert replayed.status_code == 302
    assert replayed.headers["Location"].startswith("/login")


def test_changing_the_password_ends_other_sessions_and_keeps_this_one(app, member):
    """Another browser's session ends; the one that made the change stays signed in; the new password works."""
    other_browser = _signed_in_client(app, member.email)
    client = _signed_in_client(app, member.email)
    response = _change(client, factories.PASSWORD, "a new secret", "a new secret")
    assert response.status_code == 302
    assert client.get(f"/w/{member.workspace_id}/").status_code == 200
    assert other_browser.get(f"/w/{member.workspace_id}/").status_code == 302
    assert _signed_in_client(app, member.email, "a new secret").get("/").status_code == 302


def _change(client, current: str, new: str, repeated: str):
    return client.post(
        "/account/password", data={"current_password": current, "new_password": new, "repeat_password": repeated}
    )


def test_a_wrong_current_password_is_refused_with_a_message(app, member):
    client = _signed_in_client(app, member.email)
    response = _change(client, "not-it", "a new secret", "a new secret")
    assert response.status_code == 400
    assert "Your current password is not right." in response.get_data(as_text=True)
    assert client.get("/").status_code == 302  # still signed in, password unchanged
    assert _signed_in_client(app, member.email) is not None


def test_two_different_new_passwords_are_refused_with_a_message(app, member):
    client = _signed_in_client(app, member.email)
    response = _change(client, factories.PASSWORD, "a new secret", "a new secreT")
    assert response.status_code == 400
    assert "The two new passwords are not the same." in response.get_data(as_text=True)


def test_a_short_new_password_is_refused_with_a_message(app, member):
    client = _signed_in_client(app, member.email)
    response = _change(client, factories.PASSWORD, "short", "short")
    assert response.status_code == 400
    assert "The new password needs at least 8 characters." in response.get_data(as_text=True)


def test_an_empty_field_is_named_in_its_message(app, member):
    client = _signed_in_client(app, member.email)
    response = _change(client, factories.PASSWORD, "a new secret", "")
    assert response.status_code == 400
    assert "Enter the new password a second time." in response.get_data(as_text=True)


def test_the_password_page_counts_wrong_current_passwords_toward_the_lock(app, member):
    """Guessing through the password page locks like sign-in does: it is no way around the limit."""
    client = _signed_in_client(app, member.email)
    for _ in range(app.config["SETTINGS"].login_max_failures):
        assert _change(client, "a guess", "a new secret", "a new secret").status_code == 400
    response = _change(client, factories.PASSWORD, "a new secret", "a new secret")
    assert response.status_code == 429
    assert "Too many failed sign-ins." in response.get_data(as_text=True)


def test_removal_from_the_last_workspace_ends_sessions(app, member):
    """`flask remove-member` removing someone's only membership signs them out everywhere."""
    client = _signed_in_client(app, member.email)
    result = app.test_cli_runner().invoke(args=["remove-member", member.email, str(member.workspace_id)])
    assert result.exit_code == 0, result.output
    assert client.get("/").status_code == 302


def test_removal_from_one_of_two_workspaces_keeps_the_session(app, member):
    """Still a member elsewhere: the session stays, and the removed workspace answers 404."""
    with app.app_context():
        person = db.session.execute(select(Person).where(Person.email == member.email)).scalar_one()
        factories.make_member(db.session.get(Workspace, member.other_workspace_id), person=person)
    client = _signed_in_client(app, member.email)
    result = app.test_cli_runner().invoke(args=["remove-member", member.email, str(member.workspace_id)])
    assert result.exit_code == 0, result.output
    assert client.get(f"/w/{member.other_workspace_id}/").status_code == 200
    assert client.get(f"/w/{member.workspace_id}/").status_code == 404
    with app.app_context():
        remaining = db.session.execute(select(Membership.workspace_id)).scalars().all()
    assert remaining == [member.other_workspace_id]


def test_the_session_cookie_is_secure_by_default(client, auth, member):
    """Without SESSION_COOKIE_SECURE set, the cookie is sent over HTTPS only."""
    response = auth.login(member.email)
    cookie = next(value for value in response.headers.getlist("Set-Cookie") if value.startswith("session="))
    assert "secure" in [part.strip().lower() for part in cookie.split(";")]
