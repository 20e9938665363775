"""query_exports carry the lease of the attempt producing them: holder and expiry

Revision ID: b7d41e2a9c53
Revises: 5b1f0c7d2e94
Create Date: 2026-12-01 00:20:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b7d41e2a9c53'
down_revision = '5b1f0c7d2e94'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lease_holder', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True))


def downgrade():
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.drop_column('lease_expires_at')
        batch_op.drop_column('lease_holder')
