"""The sign-in lock holds under concurrency: attempts sent at once cannot check more passwords than the limit.

Forty sign-ins are sent sixteen at a time to the real app over HTTP (a threaded server, CSRF on,
PostgreSQL underneath), each from its own cookie jar; the thirtieth has the right password.
"""

from __future__ import annotations

import http.client
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from tests import factories

ATTEMPTS = 40
AT_ONCE = 16
RIGHT_PASSWORD_AT = 29  # the thirtieth attempt


@dataclass
class LoginPage:
    cookie: str
    csrf_token: str


def _open_login_page(base_url: str) -> LoginPage:
    """GET /login as a new browser: its session cookie and the form's CSRF token."""
    address = urlsplit(base_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    try:
        connection.request("GET", "/login")
        response = connection.getresponse()
        html = response.read().decode()
        cookie = next(
            value.split(";", 1)[0] for value in response.headers.get_all("Set-Cookie") if value.startswith("session=")
        )
    finally:
        connection.close()
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html).group(1)
    return LoginPage(cookie, token)


def _sign_in(base_url: str, page: LoginPage, email: str, password: str) -> int:
    address = urlsplit(base_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=120)
    try:
        body = urlencode({"csrf_token": page.csrf_token, "email": email, "password": password})
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": page.cookie}
        connection.request("POST", "/login", body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_concurrent_attempts_check_no_more_passwords_than_the_limit(app, live_server, app_context):
    """Exactly LOGIN_MAX_FAILURES attempts are checked (401); every other answers 429, the right password too."""
    email = factories.make_person().email
    limit = app.config["SETTINGS"].login_max_failures
    pages = [_open_login_page(live_server) for _ in range(ATTEMPTS)]
    passwords = ["wrong password"] * ATTEMPTS
    passwords[RIGHT_PASSWORD_AT] = factories.PASSWORD

    with ThreadPoolExecutor(max_workers=AT_ONCE) as pool:
        statuses = list(pool.map(lambda i: _sign_in(live_server, pages[i], email, passwords[i]), range(ATTEMPTS)))

    assert statuses.count(401) == limit
    assert statuses.count(429) == ATTEMPTS - limit
    assert statuses[RIGHT_PASSWORD_AT] == 429
