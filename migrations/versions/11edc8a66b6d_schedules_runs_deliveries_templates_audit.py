"""Schedules with their recipients, runs, attempts and deliveries; message templates; the audit log;
query_exports.schedule_id for files a schedule produced

Revision ID: 11edc8a66b6d
Revises: b7e2c41d9a05
Create Date: 2026-12-01 00:36:46.145469

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '11edc8a66b6d'
down_revision = 'b7e2c41d9a05'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('audit_events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=True),
    sa.Column('actor_id', sa.Integer(), nullable=True),
    sa.Column('action', sa.String(length=80), nullable=False),
    sa.Column('subject_type', sa.String(length=40), nullable=False),
    sa.Column('subject_id', sa.Integer(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['actor_id'], ['people.id'], name=op.f('fk_audit_events_actor_id_people'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_audit_events_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_events'))
    )
    with op.batch_alter_table('audit_events', schema=None) as batch_op:
        batch_op.create_index('ix_audit_events_workspace_time', ['workspace_id', 'created_at'], unique=False)

    op.create_table('communication_templates',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_by_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['people.id'], name=op.f('fk_communication_templates_created_by_id_people')),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_communication_templates_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_communication_templates')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_communication_templates_workspace_id'))
    )
    with op.batch_alter_table('communication_templates', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_communication_templates_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('communication_template_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('template_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('subject', sa.String(length=200), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('created_by_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('published_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("status <> 'published' OR published_at IS NOT NULL", name=op.f('ck_communication_template_versions_published_at')),
    sa.CheckConstraint("status IN ('draft', 'published')", name=op.f('ck_communication_template_versions_status')),
    sa.ForeignKeyConstraint(['created_by_id'], ['people.id'], name=op.f('fk_communication_template_versions_created_by_id_people')),
    sa.ForeignKeyConstraint(['template_id'], ['communication_templates.id'], name=op.f('fk_communication_template_versions_template_id_communication_templates'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_communication_template_versions')),
    sa.UniqueConstraint('template_id', 'number', name=op.f('uq_communication_template_versions_template_id'))
    )
    with op.batch_alter_table('communication_template_versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_communication_template_versions_template_id'), ['template_id'], unique=False)

    op.create_table('schedules',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('owner_id', sa.Integer(), nullable=False),
    sa.Column('format', sa.String(length=10), nullable=False),
    sa.Column('heading', sa.String(length=10), nullable=False),
    sa.Column('source_query_id', sa.Integer(), nullable=True),
    sa.Column('query_definition', sa.JSON(), nullable=True),
    sa.Column('query_version', sa.Integer(), nullable=True),
    sa.Column('report_id', sa.Integer(), nullable=True),
    sa.Column('report_version_seen', sa.Integer(), nullable=True),
    sa.Column('timetable', sa.JSON(), nullable=False),
    sa.Column('next_occurrence_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_occurrence_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('failure_streak', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('pause_reason', sa.String(length=30), nullable=True),
    sa.Column('paused_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('template_version_id', sa.Integer(), nullable=True),
    sa.Column('custom_message', sa.Text(), nullable=False),
    sa.Column('send_when_empty', sa.Boolean(), nullable=False),
    sa.Column('legacy_ref', sa.String(length=200), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("(kind = 'query' AND format IN ('csv', 'xlsx') AND query_definition IS NOT NULL AND query_version IS NOT NULL) OR (kind = 'report' AND format IN ('pdf', 'xlsx'))", name=op.f('ck_schedules_source_shape')),
    sa.CheckConstraint("(status = 'active' AND pause_reason IS NULL) OR (status = 'paused' AND pause_reason IN ('user', 'failure_streak', 'owner_access_lost', 'source_removed', 'legacy_import'))", name=op.f('ck_schedules_pause_reason')),
    sa.CheckConstraint("heading IN ('names', 'labels', 'none')", name=op.f('ck_schedules_heading')),
    sa.CheckConstraint("kind IN ('query', 'report')", name=op.f('ck_schedules_kind')),
    sa.CheckConstraint("status IN ('active', 'paused')", name=op.f('ck_schedules_status')),
    sa.CheckConstraint('failure_streak >= 0', name=op.f('ck_schedules_failure_streak')),
    sa.ForeignKeyConstraint(['owner_id'], ['people.id'], name=op.f('fk_schedules_owner_id_people')),
    sa.ForeignKeyConstraint(['report_id'], ['reports.id'], name=op.f('fk_schedules_report_id_reports'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['source_query_id'], ['saved_queries.id'], name=op.f('fk_schedules_source_query_id_saved_queries')),
    sa.ForeignKeyConstraint(['template_version_id'], ['communication_template_versions.id'], name=op.f('fk_schedules_template_version_id_communication_template_versions')),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_schedules_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_schedules')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_schedules_workspace_id'))
    )
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.create_index('ix_schedules_due', ['status', 'next_occurrence_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_schedules_owner_id'), ['owner_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_schedules_report_id'), ['report_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_schedules_source_query_id'), ['source_query_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_schedules_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('query_schedule_recipients',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('schedule_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('person_id', sa.Integer(), nullable=True),
    sa.Column('email', sa.String(length=254), nullable=True),
    sa.Column('address_key', sa.String(length=260), nullable=False),
    sa.CheckConstraint('(person_id IS NULL) <> (email IS NULL)', name=op.f('ck_query_schedule_recipients_person_or_email')),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_query_schedule_recipients_person_id_people'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['schedule_id'], ['schedules.id'], name=op.f('fk_query_schedule_recipients_schedule_id_schedules'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_query_schedule_recipients')),
    sa.UniqueConstraint('schedule_id', 'address_key', name=op.f('uq_query_schedule_recipients_schedule_id'))
    )
    with op.batch_alter_table('query_schedule_recipients', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_schedule_recipients_schedule_id'), ['schedule_id'], unique=False)

    op.create_table('schedule_unsubscribes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('schedule_id', sa.Integer(), nullable=False),
    sa.Column('address_key', sa.String(length=260), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['schedule_id'], ['schedules.id'], name=op.f('fk_schedule_unsubscribes_schedule_id_schedules'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_unsubscribes')),
    sa.UniqueConstraint('schedule_id', 'address_key', name=op.f('uq_schedule_unsubscribes_schedule_id'))
    )
    with op.batch_alter_table('schedule_unsubscribes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_schedule_unsubscribes_schedule_id'), ['schedule_id'], unique=False)

    op.create_table('schedule_runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('schedule_id', sa.Integer(), nullable=False),
    sa.Column('occurrence_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('trigger', sa.String(length=10), nullable=False),
    sa.Column('skipped_occurrences', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('attempt_count', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('export_id', sa.Integer(), nullable=True),
    sa.Column('row_count', sa.Integer(), nullable=True),
    sa.Column('source_changed', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('failure_code', sa.String(length=40), nullable=True),
    sa.Column('failure_detail', sa.String(length=1000), nullable=True),
    sa.Column('job_id', sa.String(length=100), nullable=True),
    sa.Column('dispatched_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('lease_holder', sa.String(length=200), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name=op.f('ck_schedule_runs_failure_code')),
    sa.CheckConstraint("status IN ('queued', 'running', 'succeeded', 'failed')", name=op.f('ck_schedule_runs_status')),
    sa.CheckConstraint("trigger IN ('timetable', 'manual')", name=op.f('ck_schedule_runs_trigger')),
    sa.ForeignKeyConstraint(['export_id'], ['query_exports.id'], name=op.f('fk_schedule_runs_export_id_query_exports'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['schedule_id'], ['schedules.id'], name=op.f('fk_schedule_runs_schedule_id_schedules'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_schedule_runs_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_runs')),
    sa.UniqueConstraint('schedule_id', 'occurrence_at', name='schedule_runs_occurrence_uidx')
    )
    with op.batch_alter_table('schedule_runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_schedule_runs_schedule_id'), ['schedule_id'], unique=False)
        batch_op.create_index('ix_schedule_runs_status', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_schedule_runs_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('query_schedule_deliveries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('address_key', sa.String(length=260), nullable=False),
    sa.Column('person_id', sa.Integer(), nullable=True),
    sa.Column('email', sa.String(length=254), nullable=True),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('skip_reason', sa.String(length=30), nullable=True),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('send_attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('submission_id', sa.String(length=200), nullable=True),
    sa.Column('submitted_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('link_nonce', sa.String(length=64), nullable=False),
    sa.Column('download_count', sa.Integer(), nullable=False),
    sa.Column('last_downloaded_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("status <> 'skipped' OR skip_reason IN ('empty_result', 'recipient_removed', 'recipient_not_allowed', 'recipient_unsubscribed')", name=op.f('ck_query_schedule_deliveries_skip_reason')),
    sa.CheckConstraint("status <> 'submitted' OR submission_id IS NOT NULL", name=op.f('ck_query_schedule_deliveries_submission_id')),
    sa.CheckConstraint("status IN ('pending', 'submitted', 'skipped', 'failed')", name=op.f('ck_query_schedule_deliveries_status')),
    sa.CheckConstraint('(person_id IS NULL) <> (email IS NULL)', name=op.f('ck_query_schedule_deliveries_person_or_email')),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_query_schedule_deliveries_person_id_people'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['run_id'], ['schedule_runs.id'], name=op.f('fk_query_schedule_deliveries_run_id_schedule_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_query_schedule_deliveries')),
    sa.UniqueConstraint('link_nonce', name=op.f('uq_query_schedule_deliveries_link_nonce')),
    sa.UniqueConstraint('run_id', 'address_key', name=op.f('uq_query_schedule_deliveries_run_id'))
    )
    with op.batch_alter_table('query_schedule_deliveries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_schedule_deliveries_run_id'), ['run_id'], unique=False)

    op.create_table('schedule_run_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('outcome', sa.String(length=10), nullable=True),
    sa.Column('error_code', sa.String(length=40), nullable=True),
    sa.Column('error_detail', sa.String(length=1000), nullable=True),
    sa.Column('export_id', sa.Integer(), nullable=True),
    sa.CheckConstraint("outcome IS NULL OR outcome IN ('succeeded', 'failed')", name=op.f('ck_schedule_run_attempts_outcome')),
    sa.ForeignKeyConstraint(['export_id'], ['query_exports.id'], name=op.f('fk_schedule_run_attempts_export_id_query_exports'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['run_id'], ['schedule_runs.id'], name=op.f('fk_schedule_run_attempts_run_id_schedule_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_run_attempts')),
    sa.UniqueConstraint('run_id', 'number', name=op.f('uq_schedule_run_attempts_run_id'))
    )
    with op.batch_alter_table('schedule_run_attempts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_schedule_run_attempts_run_id'), ['run_id'], unique=False)

    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('schedule_id', sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f('ix_query_exports_schedule_id'), ['schedule_id'], unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_query_exports_schedule_id_schedules'), 'schedules', ['schedule_id'], ['id'], ondelete='SET NULL')



def downgrade():
    with op.batch_alter_table('query_exports', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_query_exports_schedule_id_schedules'), type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_query_exports_schedule_id'))
        batch_op.drop_column('schedule_id')

    with op.batch_alter_table('schedule_run_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_schedule_run_attempts_run_id'))

    op.drop_table('schedule_run_attempts')
    with op.batch_alter_table('query_schedule_deliveries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_query_schedule_deliveries_run_id'))

    op.drop_table('query_schedule_deliveries')
    with op.batch_alter_table('schedule_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_schedule_runs_workspace_id'))
        batch_op.drop_index('ix_schedule_runs_status')
        batch_op.drop_index(batch_op.f('ix_schedule_runs_schedule_id'))

    op.drop_table('schedule_runs')
    with op.batch_alter_table('schedule_unsubscribes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_schedule_unsubscribes_schedule_id'))

    op.drop_table('schedule_unsubscribes')
    with op.batch_alter_table('query_schedule_recipients', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_query_schedule_recipients_schedule_id'))

    op.drop_table('query_schedule_recipients')
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_schedules_workspace_id'))
        batch_op.drop_index(batch_op.f('ix_schedules_source_query_id'))
        batch_op.drop_index(batch_op.f('ix_schedules_report_id'))
        batch_op.drop_index(batch_op.f('ix_schedules_owner_id'))
        batch_op.drop_index('ix_schedules_due')

    op.drop_table('schedules')
    with op.batch_alter_table('communication_template_versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_communication_template_versions_template_id'))

    op.drop_table('communication_template_versions')
    with op.batch_alter_table('communication_templates', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_communication_templates_workspace_id'))

    op.drop_table('communication_templates')
    with op.batch_alter_table('audit_events', schema=None) as batch_op:
        batch_op.drop_index('ix_audit_events_workspace_time')

    op.drop_table('audit_events')
