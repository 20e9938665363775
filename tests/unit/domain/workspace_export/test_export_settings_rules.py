"""The rules export settings and destinations are checked by before they are stored."""

from __future__ import annotations

import pytest

from app.domain.destinations.destination_input import DestinationInput, check_bucket, check_destination, connection_key
from app.domain.errors import ValidationError
from app.domain.workspace_export.export_settings_rules import SettingsInput, check_settings, describe_cadence

MEMBERS = frozenset({1, 2, 3})


def settings_input(**overrides) -> SettingsInput:
    values = {
        "datasets": ["shifts", "teams"],
        "format": "csv",
        "volume_size_mb": "256",
        "retention_days": "7",
        "cadence": "off",
        "cadence_time": "02:00",
        "cadence_weekday": "",
        "cadence_day": "",
        "notify_person_ids": [],
        "status": "active",
    }
    return SettingsInput(**{**values, **overrides})


def destination_input(**overrides) -> DestinationInput:
    values = {
        "name": " Bucket ",
        "kind": "s3",
        "bucket": "my-bucket",
        "region": "us-east-1",
        "endpoint_url": "",
        "access_key_id": "AKIAEXAMPLE",
        "secret": "s3cr3t",
        "path": "exports/",
    }
    return DestinationInput(**{**values, **overrides})


def test_datasets_are_kept_in_the_registrys_order_once_each():
    checked = check_settings(settings_input(datasets=["shifts", "teams", "shifts"]), MEMBERS, "UTC")
    assert checked.datasets == ["teams", "shifts"]


def test_a_weekday_is_kept_only_for_a_weekly_cadence_and_a_day_only_for_a_monthly_one():
    weekly = check_settings(settings_input(cadence="weekly", cadence_weekday="3", cadence_day="9"), MEMBERS, "UTC")
    monthly = check_settings(settings_input(cadence="monthly", cadence_weekday="3", cadence_day="9"), MEMBERS, "UTC")
    assert (weekly.cadence_weekday, weekly.cadence_day) == (3, None)
    assert (monthly.cadence_weekday, monthly.cadence_day) == (None, 9)


def test_the_time_is_stored_as_hours_and_minutes():
    assert check_settings(settings_input(cadence_time="7:05"), MEMBERS, "UTC").cadence_time == "07:05"


def test_people_to_notify_are_kept_once_each_in_the_order_chosen():
    checked = check_settings(settings_input(notify_person_ids=["3", "1", "3"]), MEMBERS, "UTC")
    assert checked.notify_person_ids == [3, 1]


def test_a_bad_workspace_zone_is_reported_on_the_cadence():
    with pytest.raises(ValidationError) as refused:
        check_settings(settings_input(cadence="daily"), MEMBERS, "Nowhere/Atlantis")
    assert refused.value.field == "cadence"


def test_a_destination_is_trimmed_and_its_path_normalised():
    checked = check_destination(destination_input(), creating=True, directory_root_configured=False)
    assert (checked.name, checked.path, checked.secret) == ("Bucket", "exports", "s3cr3t")


def test_an_edit_without_a_secret_keeps_the_stored_one():
    checked = check_destination(destination_input(secret=" "), creating=False, directory_root_configured=False)
    assert checked.secret is None


def test_a_new_bucket_destination_needs_a_secret():
    with pytest.raises(ValidationError) as refused:
        check_destination(destination_input(secret=""), creating=True, directory_root_configured=False)
    assert refused.value.field == "secret"


def test_a_directory_destination_ignores_the_bucket_fields():
    checked = check_destination(
        destination_input(kind="directory", bucket="BAD BUCKET"), creating=True, directory_root_configured=True
    )
    assert (checked.bucket, checked.access_key_id, checked.secret, checked.connection_key) == (
        None,
        None,
        None,
        "directory:",
    )


def test_a_directory_destination_is_refused_without_a_root():
    with pytest.raises(ValidationError) as refused:
        check_destination(destination_input(kind="directory"), creating=True, directory_root_configured=False)
    assert refused.value.field == "kind"


def test_the_connection_key_names_the_endpoint_or_aws_and_the_bucket():
    assert connection_key(None, "b-1") == "s3:aws/b-1"
    assert connection_key("http://127.0.0.1:9000", "b-1") == "s3:http://127.0.0.1:9000/b-1"


@pytest.mark.parametrize("bucket", ["my.bucket.name", "a1b", "x" * 63, "123-bucket"])
def test_valid_bucket_names_pass(bucket):
    assert check_bucket(bucket) == bucket


@pytest.mark.parametrize("bucket", ["a.-b", "a-.b", "10.0.0.1", "sthree-x", "name-s3alias", "with_underscore"])
def test_bucket_names_s3_refuses_are_refused(bucket):
    with pytest.raises(ValidationError):
        check_bucket(bucket)


def test_the_cadence_is_described_for_people():
    monthly = describe_cadence("monthly", "03:00", None, 5, "Europe/Paris")
    assert monthly == "On day 5 of every month at 03:00 (Europe/Paris)"
    assert describe_cadence("off", "03:00", None, None, "UTC").startswith("Off")
