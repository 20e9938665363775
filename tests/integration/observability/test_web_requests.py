"""Every web response names its request id, which the request's log lines carry; HSTS only over TLS."""

from __future__ import annotations

import json


def test_each_response_names_a_new_request_id(client):
    first = client.get("/login").headers["X-Request-ID"]
    second = client.get("/login").headers["X-Request-ID"]
    assert first != second


def test_a_plain_request_id_from_a_proxy_is_kept(client):
    assert client.get("/login", headers={"X-Request-ID": "lb-0123456789"}).headers["X-Request-ID"] == "lb-0123456789"


def test_a_forged_request_id_is_replaced(client):
    assert client.get("/login", headers={"X-Request-ID": "x\tInjected"}).headers["X-Request-ID"] != "x\tInjected"


def test_log_lines_written_during_a_request_carry_its_id(client, world, json_log):
    # A sign-in with a wrong password is logged by the authentication service.
    response = client.post(
        "/login", data={"email": world.admin.email, "password": "wrong"}, headers={"X-Request-ID": "signin-request-1"}
    )
    assert response.headers["X-Request-ID"] == "signin-request-1"
    lines = [json.loads(line) for line in json_log.getvalue().splitlines()]
    assert lines, "the failed sign-in wrote no log line"
    assert {line.get("request_id") for line in lines} == {"signin-request-1"}


def test_hsts_is_sent_over_https_only(client):
    assert "Strict-Transport-Security" not in client.get("/login").headers
    secure = client.get("/login", base_url="https://localhost")
    assert secure.headers["Strict-Transport-Security"].startswith("max-age=")
