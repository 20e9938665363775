"""A database that cannot be reached answers the product's own 503 page, with Retry-After, to a
person who is signed in: the page is drawn without asking the database who they are."""

from __future__ import annotations

import dataclasses

from sqlalchemy.engine import make_url

from tests.fixtures.tcp_proxy import tcp_relay


def test_a_signed_in_page_answers_503_with_retry_after_while_the_database_is_unreachable(app_for, test_settings, world):
    database = make_url(test_settings.database_url)
    with tcp_relay(database.host or "127.0.0.1", database.port or 5432) as relay:
        through_relay = database.set(host="127.0.0.1", port=relay.port).render_as_string(hide_password=False)
        app = app_for(dataclasses.replace(test_settings, database_url=through_relay))
        client = app.test_client()
        client.post("/login", data={"email": world.member.email, "password": "password"})
        overview = f"/w/{world.workspace.id}/"
        assert client.get(overview).status_code == 200

        relay.cut()
        response = client.get(overview)

    page = response.get_data(as_text=True)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "60"
    assert "Temporarily unavailable" in page and "Try again in a minute." in page
    assert "Sign out" not in page  # nothing about the person could be read
    assert "psycopg" not in page and "OperationalError" not in page
