"""Staff people for the staff console tests: one who may act, one who may only look."""

from __future__ import annotations

import pytest

from tests import factories


@pytest.fixture
def staff(app_context):
    return factories.make_person(name="Sam Okafor", is_staff=True, staff_permissions=["staff.view", "staff.execute"])


@pytest.fixture
def viewer(app_context):
    return factories.make_person(name="Vi Ewer", is_staff=True, staff_permissions=["staff.view"])
