"""Fixtures of the workspace export settings tests (`destinations_root` is in tests/fixtures/destinations.py)."""

from __future__ import annotations

import dataclasses

import pytest


@pytest.fixture
def no_destinations_root(app):
    """The app with no DESTINATIONS_ROOT (directory destinations refused)."""
    original = app.config["SETTINGS"]
    app.config["SETTINGS"] = dataclasses.replace(original, destinations_root=None)
    yield
    app.config["SETTINGS"] = original
