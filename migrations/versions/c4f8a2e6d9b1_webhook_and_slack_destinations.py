"""Webhook and Slack destinations: two kinds, and a webhook's URL

Revision ID: c4f8a2e6d9b1
Revises: f3a8c2d9e1b7
Create Date: 2026-12-07 05:10:00

A webhook keeps its URL (shown) and its signing secret (encrypted, in secret_ciphertext); a Slack
destination keeps its incoming webhook's URL encrypted in secret_ciphertext, and no plain URL.
The kind and the connection's shape are CHECK constraints, dropped and made again (in a batch,
which SQLite needs to change a constraint).
"""

from alembic import op
import sqlalchemy as sa

revision = "c4f8a2e6d9b1"
down_revision = "f3a8c2d9e1b7"
branch_labels = None
depends_on = None

SHAPE_BEFORE = (
    "(kind = 's3' AND bucket IS NOT NULL AND s3_access = 'access_key'"
    " AND access_key_id IS NOT NULL AND secret_ciphertext IS NOT NULL)"
    " OR (kind = 's3' AND bucket IS NOT NULL AND s3_access = 'role'"
    " AND role_arn IS NOT NULL AND access_key_id IS NULL AND secret_ciphertext IS NULL)"
    " OR (kind = 'directory' AND bucket IS NULL)"
    " OR (kind = 'sftp' AND bucket IS NULL AND host IS NOT NULL AND port IS NOT NULL"
    " AND username IS NOT NULL AND sftp_login IS NOT NULL AND secret_ciphertext IS NOT NULL)"
)
SHAPE_AFTER = (
    SHAPE_BEFORE + " OR (kind = 'webhook' AND bucket IS NULL AND url IS NOT NULL AND secret_ciphertext IS NOT NULL)"
    " OR (kind = 'slack' AND bucket IS NULL AND url IS NULL AND secret_ciphertext IS NOT NULL)"
)
KINDS_BEFORE = "kind IN ('s3', 'directory', 'sftp')"
KINDS_AFTER = "kind IN ('s3', 'directory', 'sftp', 'webhook', 'slack')"


def _replace_checks(batch_op, kinds: str, shape: str) -> None:
    batch_op.drop_constraint(op.f("ck_data_export_destinations_connection_shape"), type_="check")
    batch_op.drop_constraint(op.f("ck_data_export_destinations_kind"), type_="check")
    batch_op.create_check_constraint(op.f("ck_data_export_destinations_kind"), kinds)
    batch_op.create_check_constraint(op.f("ck_data_export_destinations_connection_shape"), shape)


def upgrade():
    with op.batch_alter_table("data_export_destinations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("url", sa.String(length=1000), nullable=True))
        _replace_checks(batch_op, KINDS_AFTER, SHAPE_AFTER)


def downgrade():
    # A webhook or Slack destination has no shape the older schema allows, and its deliveries'
    # history points at it: rather than lose that history, the downgrade stops while any exists.
    found = op.get_bind().execute(
        sa.text("SELECT count(*) FROM data_export_destinations WHERE kind IN ('webhook', 'slack')")
    )
    if found.scalar_one():
        raise RuntimeError("Webhook or Slack destinations exist; the schema before them cannot hold them")
    with op.batch_alter_table("data_export_destinations", schema=None) as batch_op:
        _replace_checks(batch_op, KINDS_BEFORE, SHAPE_BEFORE)
        batch_op.drop_column("url")
