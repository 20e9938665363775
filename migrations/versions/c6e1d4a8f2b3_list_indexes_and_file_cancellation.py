"""Lists that scale and cancellable files: keyset-pagination indexes; query_exports.cancelled_by_id

Revision ID: c6e1d4a8f2b3
Revises: a3c5e7f9b1d2
Create Date: 2026-12-01 02:50:00

The failure code `cancelled` needs no schema change: query_exports.failure_code has no CHECK on
its values (only that a failed file has one).
"""
from alembic import op
import sqlalchemy as sa

revision = 'c6e1d4a8f2b3'
down_revision = 'a3c5e7f9b1d2'
branch_labels = None
depends_on = None

# (table, index, columns): one index per order a list offers, behind its workspace (and person) scope.
LIST_INDEXES = [
    ('query_exports', 'ix_query_exports_list_newest', ['workspace_id', 'requester_id', 'requested_at', 'id']),
    ('query_exports', 'ix_query_exports_list_status',
     ['workspace_id', 'requester_id', 'status', 'requested_at', 'id']),
    ('query_exports', 'ix_query_exports_list_name',
     ['workspace_id', 'requester_id', sa.text('lower(source_name)'), 'id']),
    ('query_exports', 'ix_query_exports_expiry', ['workspace_id', 'requester_id', 'status', 'expires_at']),
    ('saved_queries', 'ix_saved_queries_list_name', ['workspace_id', sa.text('lower(name)'), 'id']),
    ('saved_queries', 'ix_saved_queries_list_updated', ['workspace_id', 'updated_at', 'id']),
    ('reports', 'ix_reports_list_name', ['workspace_id', sa.text('lower(name)'), 'id']),
    ('reports', 'ix_reports_list_updated', ['workspace_id', 'updated_at', 'id']),
    ('schedules', 'ix_schedules_list_name', ['workspace_id', sa.text('lower(name)'), 'id']),
    ('schedules', 'ix_schedules_list_updated', ['workspace_id', 'updated_at', 'id']),
]


def upgrade():
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('cancelled_by_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f('fk_query_exports_cancelled_by_id_people'), 'people', ['cancelled_by_id'], ['id'],
            ondelete='SET NULL',
        )
    for table, name, columns in LIST_INDEXES:
        op.create_index(name, table, columns, unique=False)


def downgrade():
    for table, name, _ in reversed(LIST_INDEXES):
        op.drop_index(name, table_name=table)
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_query_exports_cancelled_by_id_people'), type_='foreignkey')
        batch_op.drop_column('cancelled_by_id')
