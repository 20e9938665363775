"""What a customer's IAM role must say to let Rhythm deliver into their bucket (an S3 destination
by role): the role's ARN as IAM writes it, the workspace's external id, and the trust policy to
paste, which lets Rhythm's principal assume the role only when it names that external id (the
"confused deputy" guard: another workspace cannot point Rhythm at this customer's role).
"""

from __future__ import annotations

import json
import re
import secrets

from app.domain.errors import ValidationError
from app.models.export_destination import ROLE_ARN_LIMIT

# arn:aws:iam::<account>:role/<path/><name>: a path of printable characters between slashes, a
# name of IAM's characters, at most 64 of them.
_ROLE_ARN = re.compile(r"arn:aws:iam::\d{12}:role/(?:[\x21-\x2e\x30-\x7e]+/)*[\w+=,.@-]{1,64}", re.ASCII)


def new_external_id() -> str:
    """An external id no one can guess: 160 random bits, in characters STS accepts."""
    return "rhythm-" + secrets.token_hex(20)


def validate_role_arn(text: str) -> str:
    arn = (text or "").strip()
    if not arn:
        raise ValidationError("Enter the ARN of the role you created for Rhythm.", "role_arn")
    if len(arn) > ROLE_ARN_LIMIT or not _ROLE_ARN.fullmatch(arn):
        raise ValidationError(
            "A role's ARN looks like arn:aws:iam::123456789012:role/rhythm-delivery: "
            "copy it from the role's page in the IAM console.",
            "role_arn",
        )
    return arn


def trust_policy(principal_arn: str, external_id: str) -> str:
    """The role's trust policy: Rhythm's principal may assume it, with this external id only."""
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": principal_arn},
                "Action": "sts:AssumeRole",
                "Condition": {"StringEquals": {"sts:ExternalId": external_id}},
            }
        ],
    }
    return json.dumps(policy, indent=2)
