"""export coverage registry: dataset versions with content hashes, and registry versions

Revision ID: d8f3a61c7b52
Revises: c4a7e19b2d60
Create Date: 2026-12-01 01:35:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'd8f3a61c7b52'
down_revision = 'c4a7e19b2d60'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'export_coverage_datasets',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('dataset', sa.String(length=100), nullable=False),
        sa.Column('schema_version', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('content_hash', sa.String(length=64), nullable=False),
        sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('active', 'deferred', 'retired')", name=op.f('ck_export_coverage_datasets_status')),
        sa.CheckConstraint('schema_version >= 1', name=op.f('ck_export_coverage_datasets_schema_version')),
        sa.CheckConstraint('length(content_hash) = 64', name=op.f('ck_export_coverage_datasets_content_hash')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_export_coverage_datasets')),
        sa.UniqueConstraint('dataset', 'schema_version', name='export_coverage_datasets_version_uidx'),
    )
    op.create_table(
        'export_coverage_versions',
        sa.Column('version', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('summary', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('version', name=op.f('pk_export_coverage_versions')),
    )


def downgrade():
    op.drop_table('export_coverage_versions')
    op.drop_table('export_coverage_datasets')
