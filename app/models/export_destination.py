"""A workspace's export destinations (DESIGN section 8): the customer's storage (an S3 bucket,
reached with a stored key or by assuming a role the customer grants, an SFTP server, or the
embedded directory) its packages are copied to, and the receivers (a webhook, a Slack channel)
that are told, with a link, when a file is ready.

Adding, editing, testing and removing one is app/services/destinations/registry.py.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.types import SUMMARY_LIMIT, UTCDateTime, one_of, utcnow
from app.models.workspace import Workspace

MAX_DESTINATIONS = 5


class DestinationKind(StrEnum):
    S3 = "s3"
    DIRECTORY = "directory"  # the embedded default, confined under DESTINATIONS_ROOT
    SFTP = "sftp"
    WEBHOOK = "webhook"  # an HTTPS URL receiving a signed JSON message with a link, never the data
    SLACK = "slack"  # a Slack incoming webhook, whose URL is its secret


# The kinds that receive a message announcing a file (app.destinations.announce), not the file.
ANNOUNCING_KINDS = frozenset({DestinationKind.WEBHOOK, DestinationKind.SLACK})
# The announcing kinds whose message carries a link that opens the file with no sign-in: a
# webhook's receiver is a machine that cannot sign in. A Slack channel's members can pass a
# message on, so its link opens only for people signed in who may read the file.
LINKED_KINDS = frozenset({DestinationKind.WEBHOOK})
# The longest webhook URL (the form's rule, app/domain/destinations/destination_rules.py).
MESSAGE_URL_LIMIT = 1000


class SftpLogin(StrEnum):
    """What an SFTP destination's secret is."""

    PASSWORD = "password"
    PRIVATE_KEY = "private_key"  # Ed25519 or RSA, in OpenSSH's or PEM's text form


class S3Access(StrEnum):
    """How Rhythm signs an S3 destination's requests."""

    ACCESS_KEY = "access_key"  # the customer's access key id and secret, stored encrypted
    # A role in the customer's account that trusts Rhythm's own principal with the workspace's
    # external id, assumed with STS for each delivery: no customer secret is stored.
    ROLE = "role"


# IAM's longest role ARN (AssumeRole's RoleArn).
ROLE_ARN_LIMIT = 2048


class ExportDestination(Model):
    """A customer's storage a package is copied to: at most five per workspace, unique by
    connection and path. The secret is encrypted at rest (app/security/credentials.py) and never
    shown again. A removed destination keeps its row for the delivery history."""

    __tablename__ = "data_export_destinations"
    __table_args__ = (
        CheckConstraint(one_of("kind", DestinationKind), name="kind"),
        CheckConstraint(one_of("sftp_login", SftpLogin), name="sftp_login"),
        CheckConstraint(one_of("s3_access", S3Access), name="s3_access"),
        CheckConstraint(
            "(kind = 's3' AND bucket IS NOT NULL AND s3_access = 'access_key'"
            " AND access_key_id IS NOT NULL AND secret_ciphertext IS NOT NULL)"
            " OR (kind = 's3' AND bucket IS NOT NULL AND s3_access = 'role'"
            " AND role_arn IS NOT NULL AND access_key_id IS NULL AND secret_ciphertext IS NULL)"
            " OR (kind = 'directory' AND bucket IS NULL)"
            " OR (kind = 'sftp' AND bucket IS NULL AND host IS NOT NULL AND port IS NOT NULL"
            " AND username IS NOT NULL AND sftp_login IS NOT NULL AND secret_ciphertext IS NOT NULL)"
            " OR (kind = 'webhook' AND bucket IS NULL AND url IS NOT NULL AND secret_ciphertext IS NOT NULL)"
            " OR (kind = 'slack' AND bucket IS NULL AND url IS NULL AND secret_ciphertext IS NOT NULL)",
            name="connection_shape",
        ),
        Index(
            "data_export_destinations_connection_uidx",
            "workspace_id",
            "connection_key",
            "path",
            unique=True,
            postgresql_where=text("removed_at IS NULL"),
            sqlite_where=text("removed_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(10))
    bucket: Mapped[str | None] = mapped_column(String(63))
    region: Mapped[str | None] = mapped_column(String(40))
    endpoint_url: Mapped[str | None] = mapped_column(String(300))
    # How a bucket's requests are signed: with the stored key below, or by assuming `role_arn`.
    s3_access: Mapped[str | None] = mapped_column(String(10))
    access_key_id: Mapped[str | None] = mapped_column(String(128))
    role_arn: Mapped[str | None] = mapped_column(String(ROLE_ARN_LIMIT))
    # The secret, encrypted: a bucket's secret access key, an SFTP password or private key, a
    # webhook's signing secret, a Slack incoming webhook's URL.
    secret_ciphertext: Mapped[str | None] = mapped_column(Text)
    # A webhook's URL, shown (its host tells the administrator which receiver it is); a Slack
    # webhook's URL is its secret, and is kept in `secret_ciphertext` instead.
    url: Mapped[str | None] = mapped_column(String(MESSAGE_URL_LIMIT))
    # An SFTP server: where it is, who logs in and how (the password or private key is the secret).
    host: Mapped[str | None] = mapped_column(String(253))
    port: Mapped[int | None]
    username: Mapped[str | None] = mapped_column(String(100))
    sftp_login: Mapped[str | None] = mapped_column(String(12))
    # The server's host key ("<type> <base64>", as in known_hosts) an administrator pinned; no
    # delivery connects to a server whose key is not this one.
    host_key: Mapped[str | None] = mapped_column(Text)
    # The key the server offered at the last Test connection when it was not the pinned one,
    # pinned only when an administrator confirms its fingerprint.
    offered_host_key: Mapped[str | None] = mapped_column(Text)
    # What makes two destinations the same connection: "s3:<endpoint>/<bucket>", "directory:" or
    # "sftp:<user>@<host>:<port>"; a webhook's or Slack's: its kind and the SHA-256 of its URL.
    connection_key: Mapped[str] = mapped_column(String(400))
    # Relative path inside the bucket, the directory root or the SFTP login's home; "" for the top.
    path: Mapped[str] = mapped_column(String(500), default="")
    enabled: Mapped[bool] = mapped_column(default=True)
    last_tested_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_test_ok: Mapped[bool | None]
    last_test_message: Mapped[str | None] = mapped_column(String(SUMMARY_LIMIT))
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    # Its workspace's external id is what a role it assumes requires.
    workspace: Mapped[Workspace] = relationship()
