"""Fixtures of the workspace export settings tests."""

from __future__ import annotations

import dataclasses

import pytest


@pytest.fixture
def destinations_root(app, tmp_path):
    """The app with DESTINATIONS_ROOT set to a fresh folder (directory destinations allowed)."""
    original = app.config["SETTINGS"]
    app.config["SETTINGS"] = dataclasses.replace(original, destinations_root=str(tmp_path))
    yield tmp_path
    app.config["SETTINGS"] = original


@pytest.fixture
def no_destinations_root(app):
    """The app with no DESTINATIONS_ROOT (directory destinations refused)."""
    original = app.config["SETTINGS"]
    app.config["SETTINGS"] = dataclasses.replace(original, destinations_root=None)
    yield
    app.config["SETTINGS"] = original
