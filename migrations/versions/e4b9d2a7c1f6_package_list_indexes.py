"""indexes for the workspace's package list filtered by status or by format, so a page stays an
index range scan in either time order however many packages lie behind it

Revision ID: e4b9d2a7c1f6
Revises: 960715ad80b3
Create Date: 2026-12-01 07:00:00

The unfiltered list reads ix_data_export_artifacts_staff_workspace (workspace_id, created_at, id).
"""
from alembic import op

revision = 'e4b9d2a7c1f6'
down_revision = '960715ad80b3'
branch_labels = None
depends_on = None

LIST_INDEXES = [
    ('ix_data_export_artifacts_list_status', ['workspace_id', 'status', 'created_at', 'id']),
    ('ix_data_export_artifacts_list_format', ['workspace_id', 'format', 'created_at', 'id']),
]


def upgrade():
    for name, columns in LIST_INDEXES:
        op.create_index(name, 'data_export_artifacts', columns, unique=False)


def downgrade():
    for name, _columns in reversed(LIST_INDEXES):
        op.drop_index(name, table_name='data_export_artifacts')
