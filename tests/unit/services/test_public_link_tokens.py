"""Delivery link tokens: signed, naming the nonce and not the id, bound to their purpose."""

from __future__ import annotations

import pytest
from flask import Flask

from app.services.pages.public_link_tokens import link_token, nonce_from_token, public_link
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


def test_a_forged_token_is_refused(app_context):
    assert nonce_from_token("not-a-token", "download") is None


def test_public_links_start_with_the_public_url(app_context):
    assert public_link("/d/abc") == "https://exports.example/d/abc"
