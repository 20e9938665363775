"""Signing an S3 destination's requests by assuming the customer's role with STS.

Rhythm's own principal (its credentials from the standard AWS chain: environment, profile,
instance or task role) calls AssumeRole with the workspace's external id, a session name naming
the workspace (which the customer's CloudTrail shows) and the shortest duration STS grants; the
temporary credentials sign one delivery's or one test's requests and are never stored. STS's
refusals are said in people's words here, as DestinationRefused (permanent: only the customer's
role or this installation's principal can change them); a network failure or a busy STS stays
botocore's own error, which the delivery retries like any S3 one.
"""

from __future__ import annotations

from dataclasses import dataclass

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, NoCredentialsError

from app.destinations.base import S3_CONNECT_TIMEOUT_SECONDS, DestinationRefused
from app.destinations.s3 import MAX_ATTEMPTS, READ_TIMEOUT_SECONDS

# STS's shortest session: a delivery copies one package (its multipart upload's parts each sign
# anew, so a longer copy is only bounded by the part in flight).
SESSION_SECONDS = 900
_NOT_TRUSTED = (
    "the role does not trust Rhythm's principal with this workspace's external id: check the role's trust "
    "policy is the one shown on this page, and the role's ARN."
)
# STS's refusals that no retry cures, in words for the administrator who set the role up.
_REFUSALS = {
    "AccessDenied": _NOT_TRUSTED,
    "AccessDeniedException": _NOT_TRUSTED,
    "InvalidClientTokenId": "Rhythm's own AWS principal was refused by STS; the installation's operators must fix it.",
    "SignatureDoesNotMatch": "Rhythm's own AWS principal was refused by STS; the installation's operators must fix it.",
    "ExpiredToken": "Rhythm's own AWS credentials have expired; the installation's operators must renew them.",
    "RegionDisabledException": "STS is not enabled in the customer's account for this region.",
    "ValidationError": "STS refused the role's ARN: check it is the ARN of a role, copied whole.",
}


@dataclass(frozen=True)
class RoleCredentials:
    access_key_id: str
    secret: str
    session_token: str


def session_name(workspace_id: int) -> str:
    """The name the customer's audit trail shows for Rhythm's sessions in their account."""
    return f"rhythm-workspace-{workspace_id}"


def assume_role(
    *, role_arn: str, external_id: str, workspace_id: int, region: str | None, sts_endpoint_url: str | None
) -> RoleCredentials:
    """Temporary credentials of the customer's role; DestinationRefused when STS refuses."""
    # A session of its own reads the credential chain now: boto3's shared default session keeps the
    # credentials it first found, which a rotated key or a refreshed environment would outlive.
    client = boto3.session.Session().client(
        "sts",
        region_name=region or "us-east-1",
        endpoint_url=sts_endpoint_url,
        config=Config(
            connect_timeout=S3_CONNECT_TIMEOUT_SECONDS,
            read_timeout=READ_TIMEOUT_SECONDS,
            retries={"max_attempts": MAX_ATTEMPTS, "mode": "standard"},
        ),
    )
    try:
        answer = client.assume_role(
            RoleArn=role_arn,
            ExternalId=external_id,
            RoleSessionName=session_name(workspace_id),
            DurationSeconds=SESSION_SECONDS,
        )
    except NoCredentialsError:
        raise DestinationRefused(
            "Rhythm's own AWS credentials are not configured on this installation, so it cannot assume the role.",
            "no_principal_credentials",
        ) from None
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code") or "")
        if code in _REFUSALS:
            raise DestinationRefused(f"{code}: {_REFUSALS[code]}", f"role_{code}") from None
        raise
    credentials = answer["Credentials"]
    return RoleCredentials(credentials["AccessKeyId"], credentials["SecretAccessKey"], credentials["SessionToken"])
