"""the list indexes on lower(name) that SQLite databases lost, made again

Revision ID: d5e8a1c3f7b9
Revises: 7b2e4f9a6c13
Create Date: 2026-12-04 23:45:00

On SQLite, revisions 960715ad80b3 and 7b2e4f9a6c13 copied `query_exports` and `schedules` from a
reflection that cannot read an index on an expression, so a database they upgraded lost
`ix_query_exports_list_name` and `ix_schedules_list_name` (the lists sorted by name scanned the
table). Those revisions now keep the indexes; this one makes them again where they were lost.
PostgreSQL never lost them, and `IF NOT EXISTS` leaves every database that has them unchanged.
"""
from alembic import op
import sqlalchemy as sa

revision = 'd5e8a1c3f7b9'
down_revision = '7b2e4f9a6c13'
branch_labels = None
depends_on = None

LIST_NAME_INDEXES = [
    ('query_exports', 'ix_query_exports_list_name', ['workspace_id', 'requester_id', sa.text('lower(source_name)'), 'id']),
    ('schedules', 'ix_schedules_list_name', ['workspace_id', sa.text('lower(name)'), 'id']),
]


def upgrade():
    for table, name, columns in LIST_NAME_INDEXES:
        op.create_index(name, table, columns, if_not_exists=True)


def downgrade():
    # Nothing to undo: the indexes belong to revision c6e1d4a8f2b3, whose downgrade drops them.
    pass
