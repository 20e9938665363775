"""/healthz reports the database, Redis and storage, and answers 503 when one is down."""

import dataclasses

import pytest


@pytest.fixture
def settings_changed(app):
    """Swap settings on the running app for one test, restoring them afterwards."""
    original = app.config["SETTINGS"]

    def change(**values):
        app.config["SETTINGS"] = dataclasses.replace(original, **values)

    yield change
    app.config["SETTINGS"] = original


def test_health_is_ok_when_every_engine_answers(client):
    """All three checks pass on the test services: 200 with status ok."""
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "checks": {"database": "ok", "redis": "ok", "storage": "ok"}}


def test_health_is_503_when_redis_does_not_answer(client, settings_changed):
    """A Redis that refuses connections makes the check fail and names the error."""
    settings_changed(redis_url="redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json["checks"]["redis"].startswith("error:")
    assert response.json["checks"]["database"] == "ok"


def test_health_is_503_when_storage_cannot_be_written(client, settings_changed, tmp_path):
    """A storage directory that cannot exist (its parent is a file) fails the storage check."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    settings_changed(storage_url=(blocker / "storage").as_uri())
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json["checks"]["storage"].startswith("error:")
