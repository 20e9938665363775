"""An S3 destination by role: its ARN as IAM writes it, no key or secret kept, refused where the
installation has no principal; the external id and the trust policy a customer pastes."""

from __future__ import annotations

import json

import pytest

from app.domain.destinations.destination_input import DestinationInput, check_destination
from app.domain.destinations.role_trust import new_external_id, trust_policy, validate_role_arn
from app.domain.errors import ValidationError

ROLE = "arn:aws:iam::123456789012:role/rhythm-delivery"


def role_input(**overrides) -> DestinationInput:
    values = {
        "name": "By role",
        "kind": "s3",
        "bucket": "my-bucket",
        "region": "eu-west-1",
        "endpoint_url": "",
        "access_key_id": "AKIAIGNORED",
        "secret": "ignored-secret",
        "path": "exports",
        "s3_access": "role",
        "role_arn": f" {ROLE} ",
    }
    return DestinationInput(**{**values, **overrides})


def test_a_role_keeps_its_arn_and_neither_key_nor_secret():
    checked = check_destination(
        role_input(), creating=True, directory_root_configured=False, role_access_available=True
    )
    assert (checked.s3_access, checked.role_arn, checked.access_key_id, checked.secret) == ("role", ROLE, None, None)
    assert checked.connection_key == "s3:aws/my-bucket"


def test_a_role_is_refused_where_the_installation_has_no_principal():
    with pytest.raises(ValidationError, match="not available on this installation") as refused:
        check_destination(role_input(), creating=True, directory_root_configured=False)
    assert refused.value.field == "s3_access"


def test_a_form_without_the_choice_signs_with_its_key_and_an_unknown_choice_is_refused():
    keyed = check_destination(role_input(s3_access=""), creating=True, directory_root_configured=False)
    assert (keyed.s3_access, keyed.role_arn, keyed.access_key_id) == ("access_key", None, "AKIAIGNORED")
    with pytest.raises(ValidationError) as refused:
        check_destination(role_input(s3_access="token"), creating=True, directory_root_configured=False)
    assert refused.value.field == "s3_access"


@pytest.mark.parametrize(
    "arn",
    [
        ROLE,
        "arn:aws:iam::123456789012:role/service-role/deliveries/rhythm+exports=1,a.b@c-d",
        "arn:aws:iam::000000000000:role/" + "r" * 64,
    ],
)
def test_role_arns_as_iam_writes_them_are_accepted(arn):
    assert validate_role_arn(arn) == arn


@pytest.mark.parametrize(
    "arn",
    [
        "",
        "arn:aws:iam::12345678901:role/short-account",
        "arn:aws:iam::123456789012:user/rhythm",
        "arn:aws:iam::123456789012:role/",
        "arn:aws:iam::123456789012:role/" + "r" * 65,
        "arn:aws:iam::123456789012:role/name with space",
        "arn:aws:s3:::my-bucket",
        "arn:aws:iam::123456789012:role/x\nSecond line",
    ],
)
def test_anything_else_is_refused_naming_the_field(arn):
    with pytest.raises(ValidationError) as refused:
        validate_role_arn(arn)
    assert refused.value.field == "role_arn"


def test_external_ids_are_unguessable_and_in_characters_sts_accepts():
    made = {new_external_id() for _ in range(100)}
    assert len(made) == 100
    assert all(len(value) == 47 and value.startswith("rhythm-") and value[7:].isalnum() for value in made)


def test_the_trust_policy_lets_the_principal_in_only_with_the_external_id():
    policy = json.loads(trust_policy("arn:aws:iam::111122223333:user/rhythm", "rhythm-abc"))
    assert policy == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::111122223333:user/rhythm"},
                "Action": "sts:AssumeRole",
                "Condition": {"StringEquals": {"sts:ExternalId": "rhythm-abc"}},
            }
        ],
    }
