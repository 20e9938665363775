"""initial schema: workspaces, people, datasets, saved queries, export files

Revision ID: 3cddb67e4496
Revises: (none)
Create Date: 2026-11-30 04:15:23.441379

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '3cddb67e4496'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('people',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('password_hash', sa.String(length=300), nullable=False),
    sa.Column('is_staff', sa.Boolean(), nullable=False),
    sa.Column('staff_permissions', sa.JSON(), nullable=False),
    sa.Column('failed_logins', sa.Integer(), nullable=False),
    sa.Column('locked_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_people')),
    sa.UniqueConstraint('email', name=op.f('uq_people_email'))
    )
    op.create_table('workspaces',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('sandbox', sa.Boolean(), nullable=False),
    sa.Column('export_allowance', sa.Integer(), nullable=False),
    sa.Column('date_format', sa.String(length=20), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("status IN ('live', 'suspended', 'closed')", name=op.f('ck_workspaces_status')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_workspaces'))
    )
    op.create_table('data_teams',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('code', sa.String(length=40), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('location', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_teams_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_teams'))
    )
    with op.batch_alter_table('data_teams', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_teams_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('memberships',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('person_id', sa.Integer(), nullable=False),
    sa.Column('role', sa.String(length=20), nullable=False),
    sa.Column('grants', sa.JSON(), nullable=False),
    sa.Column('dataset_grants', sa.JSON(), nullable=False),
    sa.Column('team_scope', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("role IN ('member', 'admin')", name=op.f('ck_memberships_role')),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_memberships_person_id_people'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_memberships_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memberships')),
    sa.UniqueConstraint('workspace_id', 'person_id', name=op.f('uq_memberships_workspace_id'))
    )
    with op.batch_alter_table('memberships', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_memberships_person_id'), ['person_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_memberships_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('saved_queries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('owner_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('dataset', sa.String(length=100), nullable=False),
    sa.Column('columns', sa.JSON(), nullable=False),
    sa.Column('filters', sa.JSON(), nullable=False),
    sa.Column('sort', sa.JSON(), nullable=False),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('row_limit', sa.Integer(), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['owner_id'], ['people.id'], name=op.f('fk_saved_queries_owner_id_people')),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_saved_queries_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_saved_queries')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_saved_queries_workspace_id'))
    )
    with op.batch_alter_table('saved_queries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_saved_queries_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('data_people',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('team_name', sa.String(length=200), nullable=False),
    sa.Column('full_name', sa.String(length=200), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('job_title', sa.String(length=200), nullable=False),
    sa.Column('hourly_rate', sa.Numeric(precision=10, scale=2), nullable=False),
    sa.Column('started_on', sa.Date(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['team_id'], ['data_teams.id'], name=op.f('fk_data_people_team_id_data_teams'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_people_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_people'))
    )
    with op.batch_alter_table('data_people', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_people_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('query_exports',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('requester_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('source_query_id', sa.Integer(), nullable=True),
    sa.Column('source_name', sa.String(length=200), nullable=False),
    sa.Column('source_version', sa.Integer(), nullable=False),
    sa.Column('dataset', sa.String(length=100), nullable=True),
    sa.Column('request', sa.JSON(), nullable=True),
    sa.Column('report_id', sa.Integer(), nullable=True),
    sa.Column('report_kind', sa.String(length=10), nullable=True),
    sa.Column('print_params', sa.JSON(), nullable=True),
    sa.Column('format', sa.String(length=10), nullable=False),
    sa.Column('heading', sa.String(length=10), nullable=False),
    sa.Column('include_descriptions', sa.Boolean(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('storage_key', sa.String(length=500), nullable=False),
    sa.Column('file_name', sa.String(length=255), nullable=False),
    sa.Column('rows_written', sa.Integer(), nullable=False),
    sa.Column('rows_total', sa.Integer(), nullable=True),
    sa.Column('size_bytes', sa.BigInteger(), nullable=True),
    sa.Column('row_count', sa.Integer(), nullable=True),
    sa.Column('attempt_count', sa.Integer(), nullable=False),
    sa.Column('requested_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('failure_code', sa.String(length=40), nullable=True),
    sa.Column('failure_detail', sa.String(length=1000), nullable=True),
    sa.CheckConstraint("(kind = 'query' AND dataset IS NOT NULL AND request IS NOT NULL AND format IN ('csv', 'xlsx') AND report_kind IS NULL) OR (kind = 'report' AND report_kind IN ('table', 'coded', 'summary') AND (format = 'pdf' OR (format = 'xlsx' AND report_kind IN ('table', 'coded'))))", name=op.f('ck_query_exports_source_shape')),
    sa.CheckConstraint("heading IN ('names', 'labels', 'none')", name=op.f('ck_query_exports_heading')),
    sa.CheckConstraint("include_descriptions = false OR format = 'xlsx'", name=op.f('ck_query_exports_include_descriptions')),
    sa.CheckConstraint("kind IN ('query', 'report')", name=op.f('ck_query_exports_kind')),
    sa.CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name=op.f('ck_query_exports_failure_code')),
    sa.CheckConstraint("status <> 'succeeded' OR (completed_at IS NOT NULL AND expires_at IS NOT NULL AND size_bytes IS NOT NULL AND row_count IS NOT NULL)", name=op.f('ck_query_exports_success_outcome')),
    sa.CheckConstraint("status IN ('queued', 'running', 'succeeded', 'failed')", name=op.f('ck_query_exports_status')),
    sa.ForeignKeyConstraint(['requester_id'], ['people.id'], name=op.f('fk_query_exports_requester_id_people')),
    sa.ForeignKeyConstraint(['source_query_id'], ['saved_queries.id'], name=op.f('fk_query_exports_source_query_id_saved_queries'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_query_exports_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_query_exports')),
    sa.UniqueConstraint('storage_key', name=op.f('uq_query_exports_storage_key'))
    )
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_exports_requester_id'), ['requester_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_query_exports_status'), ['status'], unique=False)
        batch_op.create_index(batch_op.f('ix_query_exports_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('data_shifts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('team_name', sa.String(length=200), nullable=False),
    sa.Column('person_id', sa.Integer(), nullable=False),
    sa.Column('person_name', sa.String(length=200), nullable=False),
    sa.Column('role', sa.String(length=100), nullable=False),
    sa.Column('starts_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ends_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('break_minutes', sa.Integer(), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['person_id'], ['data_people.id'], name=op.f('fk_data_shifts_person_id_data_people'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['data_teams.id'], name=op.f('fk_data_shifts_team_id_data_teams'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_shifts_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_shifts'))
    )
    with op.batch_alter_table('data_shifts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_shifts_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('data_time_off_requests',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('team_name', sa.String(length=200), nullable=False),
    sa.Column('person_id', sa.Integer(), nullable=False),
    sa.Column('person_name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('status', sa.String(length=40), nullable=False),
    sa.Column('starts_on', sa.Date(), nullable=False),
    sa.Column('ends_on', sa.Date(), nullable=False),
    sa.Column('days', sa.Numeric(precision=5, scale=1), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('submitted_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['person_id'], ['data_people.id'], name=op.f('fk_data_time_off_requests_person_id_data_people'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['data_teams.id'], name=op.f('fk_data_time_off_requests_team_id_data_teams'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_time_off_requests_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_time_off_requests'))
    )
    with op.batch_alter_table('data_time_off_requests', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_time_off_requests_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('data_timesheet_entries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('team_name', sa.String(length=200), nullable=False),
    sa.Column('person_id', sa.Integer(), nullable=False),
    sa.Column('person_name', sa.String(length=200), nullable=False),
    sa.Column('work_date', sa.Date(), nullable=False),
    sa.Column('hours', sa.Numeric(precision=5, scale=2), nullable=False),
    sa.Column('project', sa.String(length=200), nullable=False),
    sa.Column('approved', sa.Boolean(), nullable=False),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['person_id'], ['data_people.id'], name=op.f('fk_data_timesheet_entries_person_id_data_people'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['data_teams.id'], name=op.f('fk_data_timesheet_entries_team_id_data_teams'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_timesheet_entries_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_timesheet_entries'))
    )
    with op.batch_alter_table('data_timesheet_entries', schema=None) as batch_op:
        batch_op.create_index('ix_data_timesheet_entries_workspace_date', ['workspace_id', 'work_date'], unique=False)

    op.create_table('query_export_requests',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('export_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('dispatched_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('dispatch_count', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.String(length=100), nullable=True),
    sa.ForeignKeyConstraint(['export_id'], ['query_exports.id'], name=op.f('fk_query_export_requests_export_id_query_exports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_query_export_requests')),
    sa.UniqueConstraint('export_id', name=op.f('uq_query_export_requests_export_id'))
    )
    with op.batch_alter_table('query_export_requests', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_export_requests_dispatched_at'), ['dispatched_at'], unique=False)



def downgrade():
    with op.batch_alter_table('query_export_requests', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_query_export_requests_dispatched_at'))

    op.drop_table('query_export_requests')
    with op.batch_alter_table('data_timesheet_entries', schema=None) as batch_op:
        batch_op.drop_index('ix_data_timesheet_entries_workspace_date')

    op.drop_table('data_timesheet_entries')
    with op.batch_alter_table('data_time_off_requests', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_time_off_requests_workspace_id'))

    op.drop_table('data_time_off_requests')
    with op.batch_alter_table('data_shifts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_shifts_workspace_id'))

    op.drop_table('data_shifts')
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_query_exports_workspace_id'))
        batch_op.drop_index(batch_op.f('ix_query_exports_status'))
        batch_op.drop_index(batch_op.f('ix_query_exports_requester_id'))

    op.drop_table('query_exports')
    with op.batch_alter_table('data_people', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_people_workspace_id'))

    op.drop_table('data_people')
    with op.batch_alter_table('saved_queries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_saved_queries_workspace_id'))

    op.drop_table('saved_queries')
    with op.batch_alter_table('memberships', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_memberships_workspace_id'))
        batch_op.drop_index(batch_op.f('ix_memberships_person_id'))

    op.drop_table('memberships')
    with op.batch_alter_table('data_teams', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_teams_workspace_id'))

    op.drop_table('data_teams')
    op.drop_table('workspaces')
    op.drop_table('people')
