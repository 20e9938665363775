"""Signing in and out: messages, throttling of failures, and the session cookie's protections."""

from __future__ import annotations


def test_signing_in_lands_on_the_workspace_with_queries_and_files(client, auth, world):
    """The right password signs in and leads to the person's workspace, with Queries and Files in the menu."""
    response = auth.login(world.member.email)
    assert response.status_code == 302
    page = client.get("/", follow_redirects=True)
    html = page.get_data(as_text=True)
    assert page.request.path == f"/w/{world.workspace.id}/"
    assert f'href="/w/{world.workspace.id}/queries/"' in html
    assert f'href="/w/{world.workspace.id}/files/"' in html


def test_a_wrong_password_is_refused_with_a_message(client, auth, world):
    """A wrong password answers 401 with a message and does not sign in."""
    response = auth.login(world.member.email, password="not-the-password")
    assert response.status_code == 401
    assert "That email and password do not match." in response.get_data(as_text=True)
    assert client.get(f"/w/{world.workspace.id}/").status_code == 302


def test_an_unknown_email_gets_the_same_message(client, auth, world):
    """An email nobody has gets the same answer as a wrong password, so accounts cannot be probed."""
    response = auth.login("nobody@example.test")
    assert response.status_code == 401
    assert "That email and password do not match." in response.get_data(as_text=True)


def test_repeated_failures_lock_the_account_for_a_while(client, auth, world, app):
    """After LOGIN_MAX_FAILURES wrong passwords even the right one answers 429 with a lock message."""
    for _ in range(app.config["SETTINGS"].login_max_failures):
        assert auth.login(world.member.email, password="wrong").status_code == 401
    response = auth.login(world.member.email)
    assert response.status_code == 429
    assert "Too many failed sign-ins. Try again in" in response.get_data(as_text=True)
    assert client.get(f"/w/{world.workspace.id}/").status_code == 302


def test_the_session_cookie_is_httponly_and_samesite_lax(client, auth, world):
    """The session cookie set at sign-in cannot be read by scripts and is not sent cross-site."""
    response = auth.login(world.member.email)
    cookie = next(value for value in response.headers.getlist("Set-Cookie") if value.startswith("session="))
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in attributes
    assert "samesite=lax" in attributes


def test_signing_out_needs_a_post(client, auth, world):
    """GET /logout is refused (405) and keeps the session; POST signs out."""
    auth.login(world.member.email)
    assert client.get("/logout").status_code == 405
    assert client.get(f"/w/{world.workspace.id}/").status_code == 200
    response = auth.logout()
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/login")
    assert client.get(f"/w/{world.workspace.id}/").status_code == 302


def test_an_expired_lock_starts_a_fresh_count(client, auth, world, app):
    """Once the lock has run out, a wrong password is checked again (401) and the count starts over."""
    from datetime import timedelta

    from app.extensions import db
    from app.models.types import utcnow

    world.member.failed_logins = app.config["SETTINGS"].login_max_failures
    world.member.locked_until = utcnow() - timedelta(seconds=1)
    db.session.commit()
    assert auth.login(world.member.email, password="wrong").status_code == 401
    db.session.refresh(world.member)
    assert (world.member.failed_logins, world.member.locked_until) == (1, None)
    assert auth.login(world.member.email).status_code == 302
    db.session.refresh(world.member)
    assert world.member.failed_logins == 0
