"""S3 destinations by role: how a bucket's requests are signed, the role's ARN, and each
workspace's external id

Revision ID: b7d2e4f6a8c1
Revises: a3c9e7f1b2d4
Create Date: 2026-12-07 04:00:00

Every bucket destination so far signs with a stored key: they get s3_access 'access_key' before
the connection's shape requires one (in a batch, which SQLite needs to change a constraint).
"""
from alembic import op
import sqlalchemy as sa

revision = 'b7d2e4f6a8c1'
down_revision = 'a3c9e7f1b2d4'
branch_labels = None
depends_on = None

SFTP_SHAPE = (
    " OR (kind = 'directory' AND bucket IS NULL)"
    " OR (kind = 'sftp' AND bucket IS NULL AND host IS NOT NULL AND port IS NOT NULL"
    " AND username IS NOT NULL AND sftp_login IS NOT NULL AND secret_ciphertext IS NOT NULL)"
)
SHAPE_BEFORE = (
    "(kind = 's3' AND bucket IS NOT NULL AND access_key_id IS NOT NULL AND secret_ciphertext IS NOT NULL)"
    + SFTP_SHAPE
)
SHAPE_AFTER = (
    "(kind = 's3' AND bucket IS NOT NULL AND s3_access = 'access_key'"
    " AND access_key_id IS NOT NULL AND secret_ciphertext IS NOT NULL)"
    " OR (kind = 's3' AND bucket IS NOT NULL AND s3_access = 'role'"
    " AND role_arn IS NOT NULL AND access_key_id IS NULL AND secret_ciphertext IS NULL)" + SFTP_SHAPE
)


def _replace_shape(batch_op, shape: str) -> None:
    batch_op.drop_constraint(op.f('ck_data_export_destinations_connection_shape'), type_='check')
    batch_op.create_check_constraint(op.f('ck_data_export_destinations_connection_shape'), shape)


def upgrade():
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.add_column(sa.Column('aws_external_id', sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint(op.f('uq_workspaces_aws_external_id'), ['aws_external_id'])
    with op.batch_alter_table('data_export_destinations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('s3_access', sa.String(length=10), nullable=True))
        batch_op.add_column(sa.Column('role_arn', sa.String(length=2048), nullable=True))
    op.execute("UPDATE data_export_destinations SET s3_access = 'access_key' WHERE kind = 's3'")
    with op.batch_alter_table('data_export_destinations', schema=None) as batch_op:
        batch_op.create_check_constraint(
            op.f('ck_data_export_destinations_s3_access'), "s3_access IN ('access_key', 'role')"
        )
        _replace_shape(batch_op, SHAPE_AFTER)


def downgrade():
    # A destination by role has no shape the older schema allows, and its deliveries' history
    # points at it: rather than lose that history, the downgrade stops while any exists.
    by_role = op.get_bind().execute(sa.text("SELECT count(*) FROM data_export_destinations WHERE s3_access = 'role'"))
    if by_role.scalar_one():
        raise RuntimeError("S3 destinations by role exist; the schema before them cannot hold them")
    with op.batch_alter_table('data_export_destinations', schema=None) as batch_op:
        _replace_shape(batch_op, SHAPE_BEFORE)
        batch_op.drop_constraint(op.f('ck_data_export_destinations_s3_access'), type_='check')
        batch_op.drop_column('role_arn')
        batch_op.drop_column('s3_access')
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('uq_workspaces_aws_external_id'), type_='unique')
        batch_op.drop_column('aws_external_id')
