"""reports, and query_exports.report_id references them

Revision ID: 990cfeb60486
Revises: 3cddb67e4496
Create Date: 2026-11-30 04:19:26.780453

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '990cfeb60486'
down_revision = '3cddb67e4496'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('reports',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('owner_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('source_query_id', sa.Integer(), nullable=False),
    sa.Column('columns', sa.JSON(), nullable=False),
    sa.Column('code_column', sa.String(length=100), nullable=True),
    sa.Column('code_descriptions', sa.JSON(), nullable=False),
    sa.Column('summary', sa.JSON(), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('subtitle', sa.String(length=300), nullable=False),
    sa.Column('page_size', sa.String(length=10), nullable=False),
    sa.Column('orientation', sa.String(length=10), nullable=False),
    sa.Column('show_filters', sa.Boolean(), nullable=False),
    sa.Column('show_generated_at', sa.Boolean(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind <> 'coded' OR code_column IS NOT NULL", name=op.f('ck_reports_coded_has_code_column')),
    sa.CheckConstraint("kind IN ('table', 'coded', 'summary')", name=op.f('ck_reports_kind')),
    sa.CheckConstraint("orientation IN ('portrait', 'landscape')", name=op.f('ck_reports_orientation')),
    sa.CheckConstraint("page_size IN ('A4', 'Letter')", name=op.f('ck_reports_page_size')),
    sa.ForeignKeyConstraint(['owner_id'], ['people.id'], name=op.f('fk_reports_owner_id_people')),
    sa.ForeignKeyConstraint(['source_query_id'], ['saved_queries.id'], name=op.f('fk_reports_source_query_id_saved_queries'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_reports_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_reports')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_reports_workspace_id'))
    )
    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_reports_source_query_id'), ['source_query_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_reports_workspace_id'), ['workspace_id'], unique=False)

    # SQLite adds a foreign key by rebuilding the table; dropping the old copy with foreign keys
    # enforced would cascade-delete every outbox row (query_export_requests), so they are off
    # for the rebuild.
    sqlite = op.get_bind().dialect.name == 'sqlite'
    if sqlite:
        op.execute('PRAGMA foreign_keys=OFF')
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_exports_report_id'), ['report_id'], unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_query_exports_report_id_reports'), 'reports', ['report_id'], ['id'], ondelete='SET NULL')
    if sqlite:
        op.execute('PRAGMA foreign_keys=ON')



def downgrade():
    sqlite = op.get_bind().dialect.name == 'sqlite'
    if sqlite:
        op.execute('PRAGMA foreign_keys=OFF')
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_query_exports_report_id_reports'), type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_query_exports_report_id'))
    if sqlite:
        op.execute('PRAGMA foreign_keys=ON')

    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_reports_workspace_id'))
        batch_op.drop_index(batch_op.f('ix_reports_source_query_id'))

    op.drop_table('reports')
