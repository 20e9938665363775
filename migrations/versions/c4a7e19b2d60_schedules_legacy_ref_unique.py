"""schedules: an old system's schedule id is imported once per workspace

Revision ID: c4a7e19b2d60
Revises: 11edc8a66b6d
Create Date: 2026-12-01 00:55:00

"""
from alembic import op

revision = 'c4a7e19b2d60'
down_revision = '11edc8a66b6d'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.create_unique_constraint('schedules_legacy_ref_uidx', ['workspace_id', 'legacy_ref'])


def downgrade():
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.drop_constraint('schedules_legacy_ref_uidx', type_='unique')
