"""SFTP destinations: host, port, user, how they log in, and the pinned host key

Revision ID: a3c9e7f1b2d4
Revises: d5e8a1c3f7b9
Create Date: 2026-12-07 03:30:00

A destination's kind and its connection's shape are CHECK constraints; they are dropped and made
again with the sftp kind (in a batch, which SQLite needs to change a constraint).
"""
from alembic import op
import sqlalchemy as sa

revision = 'a3c9e7f1b2d4'
down_revision = 'd5e8a1c3f7b9'
branch_labels = None
depends_on = None

SHAPE_BEFORE = (
    "(kind = 's3' AND bucket IS NOT NULL AND access_key_id IS NOT NULL AND secret_ciphertext IS NOT NULL)"
    " OR (kind = 'directory' AND bucket IS NULL)"
)
SHAPE_AFTER = (
    SHAPE_BEFORE + " OR (kind = 'sftp' AND bucket IS NULL AND host IS NOT NULL AND port IS NOT NULL"
    " AND username IS NOT NULL AND sftp_login IS NOT NULL AND secret_ciphertext IS NOT NULL)"
)
KINDS_BEFORE = "kind IN ('s3', 'directory')"
KINDS_AFTER = "kind IN ('s3', 'directory', 'sftp')"


def _replace_checks(batch_op, kinds: str, shape: str) -> None:
    batch_op.drop_constraint(op.f('ck_data_export_destinations_connection_shape'), type_='check')
    batch_op.drop_constraint(op.f('ck_data_export_destinations_kind'), type_='check')
    batch_op.create_check_constraint(op.f('ck_data_export_destinations_kind'), kinds)
    batch_op.create_check_constraint(op.f('ck_data_export_destinations_connection_shape'), shape)


def upgrade():
    with op.batch_alter_table('data_export_destinations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('host', sa.String(length=253), nullable=True))
        batch_op.add_column(sa.Column('port', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('username', sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column('sftp_login', sa.String(length=12), nullable=True))
        batch_op.add_column(sa.Column('host_key', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('offered_host_key', sa.Text(), nullable=True))
        batch_op.create_check_constraint(
            op.f('ck_data_export_destinations_sftp_login'), "sftp_login IN ('password', 'private_key')"
        )
        _replace_checks(batch_op, KINDS_AFTER, SHAPE_AFTER)


def downgrade():
    # An SFTP destination has no shape the older schema allows, and its deliveries' history points
    # at it: rather than lose that history, the downgrade stops while any exists.
    sftp = op.get_bind().execute(sa.text("SELECT count(*) FROM data_export_destinations WHERE kind = 'sftp'"))
    if sftp.scalar_one():
        raise RuntimeError("SFTP destinations exist; the schema before them cannot hold them")
    with op.batch_alter_table('data_export_destinations', schema=None) as batch_op:
        _replace_checks(batch_op, KINDS_BEFORE, SHAPE_BEFORE)
        batch_op.drop_constraint(op.f('ck_data_export_destinations_sftp_login'), type_='check')
        for column in ('offered_host_key', 'host_key', 'sftp_login', 'username', 'port', 'host'):
            batch_op.drop_column(column)
