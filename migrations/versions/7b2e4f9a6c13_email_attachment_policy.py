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

# On SQLite a batch copies the table from its reflection, which cannot read an index on an
# expression: the copy of `schedules` would lose this one (with a warning), so it is dropped first
# and made again after. Each batch reflects only its own table (resolve_fks=False), not the tables
# it references, whose own expression indexes would be skipped with a warning each.
LIST_NAME_INDEX = 'ix_schedules_list_name'
LIST_NAME_COLUMNS = ['workspace_id', sa.text('lower(name)'), 'id']
ONLY_THIS_TABLE = {'resolve_fks': False}


def _alter_schedules(change) -> None:
    copies_table = op.get_bind().dialect.name == 'sqlite'
    if copies_table:
        op.drop_index(LIST_NAME_INDEX, table_name='schedules')
    with op.batch_alter_table('schedules', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        change(batch_op)
    if copies_table:
        op.create_index(LIST_NAME_INDEX, 'schedules', LIST_NAME_COLUMNS)


def upgrade():
    with op.batch_alter_table('workspaces', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.add_column(sa.Column('attachment_limit_mb', sa.Integer(), nullable=True))
        batch_op.create_check_constraint(
            op.f('ck_workspaces_attachment_limit_mb'), 'attachment_limit_mb BETWEEN 1 AND 20'
        )
    _alter_schedules(
        lambda batch_op: batch_op.add_column(
            sa.Column('attach_file', sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    )
    with op.batch_alter_table('query_schedule_deliveries', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.add_column(sa.Column('attached', sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column('attachment_limit_mb', sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table('query_schedule_deliveries', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.drop_column('attachment_limit_mb')
        batch_op.drop_column('attached')
    _alter_schedules(lambda batch_op: batch_op.drop_column('attach_file'))
    with op.batch_alter_table('workspaces', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.drop_constraint(op.f('ck_workspaces_attachment_limit_mb'), type_='check')
        batch_op.drop_column('attachment_limit_mb')
