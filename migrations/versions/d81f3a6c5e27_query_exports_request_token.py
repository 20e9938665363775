"""query_exports.request_token: one file per request form sent

Revision ID: d81f3a6c5e27
Revises: d8f3a61c7b52
Create Date: 2026-12-01 01:35:00

"""
from alembic import op
import sqlalchemy as sa

revision = 'd81f3a6c5e27'
down_revision = 'd8f3a61c7b52'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('request_token', sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint('query_exports_request_token_uidx', ['requester_id', 'request_token'])


def downgrade():
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.drop_constraint('query_exports_request_token_uidx', type_='unique')
        batch_op.drop_column('request_token')
