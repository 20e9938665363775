"""Delivery link tokens (an email's, a webhook's): signed, naming the nonce and not the id, bound to their purpose."""

from __future__ import annotations

import pytest
from flask import Flask

from app.services.pages.public_link_tokens import download_path, link_token, nonce_from_token, public_link
from tests.fixtures.apps import settings_for


@pytest.fixture
def app_context(tmp_path):
    settings = settings_for(tmp_path, PUBLIC_URL="https://exports.example/")
    app = Flask(__name__)
    app.config.update(SECRET_KEY="a secret", SETTINGS=settings)
    with app.app_context():
        yield


def test_a_token_gives_back_its_nonce(app_context):
    assert nonce_from_token(link_token("n0nce", "download"), "download") == "n0nce"


def test_a_tampered_token_is_refused(app_context):
    token = link_token("n0nce", "download")
    assert nonce_from_token(token[:-2] + ("AA" if not token.endswith("AA") else "BB"), "download") is None


def test_a_download_token_is_no_unsubscribe_token(app_context):
    assert nonce_from_token(link_token("n0nce", "download"), "unsubscribe") is None


def test_a_webhook_s_download_token_gives_back_its_nonce(app_context):
    assert nonce_from_token(link_token("n0nce", "destination_download"), "destination_download") == "n0nce"


@pytest.mark.parametrize(
    ("made_for", "read_as"), [("destination_download", "download"), ("download", "destination_download")]
)
def test_a_webhook_s_download_token_and_an_email_s_open_nothing_of_each_other(app_context, made_for, read_as):
    assert nonce_from_token(link_token("n0nce", made_for), read_as) is None


def test_the_same_nonce_makes_the_same_webhook_token_every_time(app_context):
    """Every attempt of a delivery's message carries the same link."""
    assert link_token("n0nce", "destination_download") == link_token("n0nce", "destination_download")


def test_a_download_path_is_the_public_download_route_with_the_purpose_s_token(app_context):
    assert download_path("n0nce", "destination_download") == "/d/" + link_token("n0nce", "destination_download")


def test_a_forged_token_is_refused(app_context):
    assert nonce_from_token("not-a-token", "download") is None


def test_public_links_start_with_the_public_url(app_context):
    assert public_link("/d/abc") == "https://exports.example/d/abc"
