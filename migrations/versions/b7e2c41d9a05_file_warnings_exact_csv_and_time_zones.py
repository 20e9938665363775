"""query_exports.warnings, exact_values and time_zone; workspaces.time_zone

Revision ID: b7e2c41d9a05
Revises: b7d41e2a9c53
Create Date: 2026-12-01 00:20:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b7e2c41d9a05'
down_revision = 'b7d41e2a9c53'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.add_column(sa.Column('time_zone', sa.String(length=64), server_default='UTC', nullable=False))

    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('exact_values', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column('time_zone', sa.String(length=64), server_default='UTC', nullable=False))
        batch_op.add_column(sa.Column('warnings', sa.JSON(), nullable=True))
        batch_op.create_check_constraint(
            op.f('ck_query_exports_exact_values'), "exact_values = false OR format = 'csv'"
        )


def downgrade():
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_query_exports_exact_values'), type_='check')
        batch_op.drop_column('warnings')
        batch_op.drop_column('time_zone')
        batch_op.drop_column('exact_values')

    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.drop_column('time_zone')
