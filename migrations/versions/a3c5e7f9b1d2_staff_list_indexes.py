"""indexes for the staff console's lists: newest first by (time, id), alone, by status and by
workspace, so a page stays an index range scan however many rows lie behind it

Revision ID: a3c5e7f9b1d2
Revises: 8f2b2b2e4886
Create Date: 2026-12-01 03:05:00

"""
from alembic import op

revision = 'a3c5e7f9b1d2'
down_revision = '8f2b2b2e4886'
branch_labels = None
depends_on = None

# (table, time column): each gets (time, id), (status, time, id) and (workspace_id, time, id).
LISTS = (
    ('query_exports', 'requested_at'),
    ('schedule_runs', 'created_at'),
    ('data_export_executions', 'created_at'),
    ('data_export_artifacts', 'created_at'),
    ('data_export_deliveries', 'created_at'),
)


def _indexes():
    for table, at in LISTS:
        yield f'ix_{table}_staff_time', table, [at, 'id']
        yield f'ix_{table}_staff_status', table, ['status', at, 'id']
        yield f'ix_{table}_staff_workspace', table, ['workspace_id', at, 'id']


def upgrade():
    for name, table, columns in _indexes():
        op.create_index(name, table, columns)


def downgrade():
    for name, table, _columns in _indexes():
        op.drop_index(name, table_name=table)
