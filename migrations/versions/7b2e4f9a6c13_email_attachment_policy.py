"""email attachments under the workspace's policy

Revision ID: 7b2e4f9a6c13
Revises: 5a7c3e9d1f20
Create Date: 2026-12-02 08:00:00

A workspace's administrators choose "links only" (NULL, every existing workspace) or a largest
attachment in MiB (1 to 20); a schedule chooses to attach its file (false for every existing
schedule); each recipient row records the decision made for its message and the limit it was
made against (NULL for existing rows: they were sent as links only, before the choice existed).
"""
from alembic import op
import sqlalchemy as sa

revision = '7b2e4f9a6c13'
down_revision = '5a7c3e9d1f20'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attachment_limit_mb', sa.Integer(), nullable=True))
        batch_op.create_check_constraint(
            op.f('ck_workspaces_attachment_limit_mb'), 'attachment_limit_mb BETWEEN 1 AND 20'
        )
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attach_file', sa.Boolean(), server_default=sa.false(), nullable=False))
    with op.batch_alter_table('query_schedule_deliveries', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attached', sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column('attachment_limit_mb', sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table('query_schedule_deliveries', schema=None) as batch_op:
        batch_op.drop_column('attachment_limit_mb')
        batch_op.drop_column('attached')
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.drop_column('attach_file')
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_workspaces_attachment_limit_mb'), type_='check')
        batch_op.drop_column('attachment_limit_mb')
