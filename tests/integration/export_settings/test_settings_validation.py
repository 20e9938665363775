"""Bad input on the export settings form: a clear message each, no 500, nothing half-saved."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.export_settings import ExportSettings
from tests import factories
from tests.integration.export_settings.forms import counts, settings_form, settings_url

BAD_SETTINGS = [
    ({"datasets": []}, "Choose at least one dataset"),
    ({"datasets": ["teams", "payroll"]}, "“payroll” is not a dataset a package can include"),
    ({"datasets": ["x" * 300]}, "is not a dataset a package can include"),
    ({"datasets": ["a\x00b"]}, "a character that cannot be saved"),
    ({"cadence_time": "07:\x0030"}, "cannot be used"),
    ({"format": "xlsx"}, "CSV, JSON Lines or Parquet"),
    ({"format": None}, "CSV, JSON Lines or Parquet"),
    ({"volume_size_mb": "15"}, "from 16 to 2048"),
    ({"volume_size_mb": "2049"}, "from 16 to 2048"),
    ({"volume_size_mb": "٣٢"}, "from 16 to 2048"),
    ({"volume_size_mb": "9" * 40}, "from 16 to 2048"),
    ({"volume_size_mb": "64.5"}, "from 16 to 2048"),
    ({"retention_days": "0"}, "from 1 to 30"),
    ({"retention_days": "31"}, "from 1 to 30"),
    ({"retention_days": "-1"}, "from 1 to 30"),
    ({"retention_days": ""}, "from 1 to 30"),
    ({"cadence": "hourly"}, "off, daily, weekly or monthly"),
    ({"cadence_time": "24:00"}, "24-hour clock"),
    ({"cadence_time": "7pm"}, "24-hour clock"),
    ({"cadence": "off", "cadence_time": "=1+2"}, "24-hour clock"),
    ({"cadence": "weekly", "cadence_weekday": ""}, "Choose the day of the week"),
    ({"cadence": "weekly", "cadence_weekday": "7"}, "Choose the day of the week"),
    ({"cadence": "monthly", "cadence_day": "29"}, "from 1 to 28"),
    ({"cadence": "monthly", "cadence_day": "0"}, "from 1 to 28"),
    ({"notify_person_ids": ["abc"]}, "Choose people to notify from the list"),
    ({"notify_person_ids": ["2147483648"]}, "Choose people to notify from the list"),
    ({"status": "suspended"}, "active or paused"),
    ({"status": ""}, "active or paused"),
    ({"version": "not-a-version"}, "The form was damaged"),
]


@pytest.fixture
def admin(client, auth, world):
    auth.login(world.admin.email)
    return world


@pytest.mark.parametrize(("overrides", "message"), BAD_SETTINGS)
def test_bad_settings_are_refused_with_a_message_and_nothing_is_saved(client, admin, overrides, message):
    response = client.post(settings_url(admin.workspace), data=settings_form(**overrides))
    assert response.status_code == 400
    assert message in response.text
    assert "The settings were not saved." in response.text
    assert counts() == (0, 0, 0)


@pytest.mark.parametrize(("overrides", "message"), BAD_SETTINGS)
def test_bad_settings_leave_saved_settings_and_the_audit_unchanged(client, admin, overrides, message):
    saved = factories.make_export_settings(admin.workspace, retention_days=9)
    before = counts()
    form = settings_form(**{"version": str(saved.version), **overrides})
    response = client.post(settings_url(admin.workspace), data=form)
    assert response.status_code == 400
    assert message in response.text
    assert counts() == before
    db.session.refresh(saved)
    assert (saved.retention_days, saved.version) == (9, 1)


def test_a_person_of_another_workspace_cannot_be_notified(client, admin):
    form = settings_form(notify_person_ids=[str(admin.outsider.id)])
    response = client.post(settings_url(admin.workspace), data=form)
    assert response.status_code == 400
    assert "is not a member of this workspace" in response.text
    assert counts() == (0, 0, 0)


def test_more_than_twenty_people_to_notify_are_refused(client, admin):
    people = [str(factories.make_member(admin.workspace).person_id) for _ in range(21)]
    response = client.post(settings_url(admin.workspace), data=settings_form(notify_person_ids=people))
    assert response.status_code == 400
    assert "at most 20 people" in response.text
    assert counts()[0] == 0


def test_every_hostile_value_in_every_field_gets_a_page_not_a_500(client, admin):
    fields = [
        "format",
        "volume_size_mb",
        "retention_days",
        "cadence",
        "cadence_time",
        "cadence_weekday",
        "cadence_day",
        "status",
    ]
    for value in factories.hostile_values():
        for field in fields:
            response = client.post(settings_url(admin.workspace), data=settings_form(**{field: value}))
            # 409 once a value was accepted: each later form was opened before the settings existed.
            assert response.status_code in (302, 400, 409), (field, value)
        response = client.post(settings_url(admin.workspace), data=settings_form(datasets=[value]))
        assert response.status_code == 400
    assert db.session.query(ExportSettings).count() <= 1
