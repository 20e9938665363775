"""The export notices' tests' mailer: `use_mailer(settings)` makes this process's mailer send with
those settings until the test ends (the real aiosmtpd server of tests/fixtures/smtp.py, or a port
nothing listens on)."""

from __future__ import annotations

import pytest

from app.communications import Mailer


@pytest.fixture
def use_mailer(app):
    """use_mailer(settings): this process's mailer sends with those settings until the test ends."""
    previous = app.extensions.get("rhythm_mailer")

    def use(settings) -> None:
        app.extensions["rhythm_mailer"] = Mailer(settings)

    yield use
    if previous is None:
        app.extensions.pop("rhythm_mailer", None)
    else:
        app.extensions["rhythm_mailer"] = previous
