"""workspace export: settings, destinations, executions and their event log, packages with volumes
and parts, deliveries with attempts, and notices (DESIGN section 8; seeds 003, 001, 000)

Revision ID: 8f2b2b2e4886
Revises: d81f3a6c5e27
Create Date: 2026-12-01 02:28:03.482521

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '8f2b2b2e4886'
down_revision = 'd81f3a6c5e27'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('data_export_definitions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('datasets', sa.JSON(), nullable=False),
    sa.Column('format', sa.String(length=10), nullable=False),
    sa.Column('volume_size_mb', sa.Integer(), nullable=False),
    sa.Column('retention_days', sa.Integer(), nullable=False),
    sa.Column('cadence', sa.String(length=10), nullable=False),
    sa.Column('cadence_time', sa.String(length=5), nullable=False),
    sa.Column('cadence_weekday', sa.Integer(), nullable=True),
    sa.Column('cadence_day', sa.Integer(), nullable=True),
    sa.Column('next_cadence_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('notify_person_ids', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('suspended_reason', sa.Text(), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("cadence IN ('off', 'daily', 'weekly', 'monthly')", name=op.f('ck_data_export_definitions_cadence')),
    sa.CheckConstraint("format IN ('csv', 'jsonl')", name=op.f('ck_data_export_definitions_format')),
    sa.CheckConstraint("status <> 'suspended' OR suspended_reason IS NOT NULL", name=op.f('ck_data_export_definitions_suspended_reason')),
    sa.CheckConstraint("status IN ('active', 'paused', 'suspended')", name=op.f('ck_data_export_definitions_status')),
    sa.CheckConstraint('cadence_day IS NULL OR cadence_day BETWEEN 1 AND 28', name=op.f('ck_data_export_definitions_cadence_day')),
    sa.CheckConstraint('cadence_weekday IS NULL OR cadence_weekday BETWEEN 0 AND 6', name=op.f('ck_data_export_definitions_cadence_weekday')),
    sa.CheckConstraint('retention_days BETWEEN 1 AND 30', name=op.f('ck_data_export_definitions_retention_days')),
    sa.CheckConstraint('volume_size_mb BETWEEN 16 AND 2048', name=op.f('ck_data_export_definitions_volume_size_mb')),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_export_definitions_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_definitions')),
    sa.UniqueConstraint('workspace_id', name='data_export_definitions_tenant_uq')
    )
    with op.batch_alter_table('data_export_definitions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_export_definitions_next_cadence_at'), ['next_cadence_at'], unique=False)

    op.create_table('data_export_destinations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('bucket', sa.String(length=63), nullable=True),
    sa.Column('region', sa.String(length=40), nullable=True),
    sa.Column('endpoint_url', sa.String(length=300), nullable=True),
    sa.Column('access_key_id', sa.String(length=128), nullable=True),
    sa.Column('secret_ciphertext', sa.Text(), nullable=True),
    sa.Column('connection_key', sa.String(length=400), nullable=False),
    sa.Column('path', sa.String(length=500), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('last_tested_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_test_ok', sa.Boolean(), nullable=True),
    sa.Column('last_test_message', sa.String(length=500), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('removed_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("(kind = 's3' AND bucket IS NOT NULL AND access_key_id IS NOT NULL AND secret_ciphertext IS NOT NULL) OR (kind = 'directory' AND bucket IS NULL)", name=op.f('ck_data_export_destinations_connection_shape')),
    sa.CheckConstraint("kind IN ('s3', 'directory')", name=op.f('ck_data_export_destinations_kind')),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_export_destinations_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_destinations'))
    )
    with op.batch_alter_table('data_export_destinations', schema=None) as batch_op:
        batch_op.create_index('data_export_destinations_connection_uidx', ['workspace_id', 'connection_key', 'path'], unique=True, postgresql_where=sa.text('removed_at IS NULL'), sqlite_where=sa.text('removed_at IS NULL'))
        batch_op.create_index(batch_op.f('ix_data_export_destinations_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('data_export_executions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('trigger', sa.String(length=10), nullable=False),
    sa.Column('cadence_key', sa.String(length=40), nullable=True),
    sa.Column('requested_by_id', sa.Integer(), nullable=True),
    sa.Column('cutoff_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('settings_snapshot', sa.JSON(), nullable=False),
    sa.Column('allowance_used', sa.Integer(), nullable=False),
    sa.Column('allowance_limit', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('phase', sa.String(length=12), nullable=True),
    sa.Column('attempt_count', sa.Integer(), nullable=False),
    sa.Column('datasets_count', sa.Integer(), nullable=False),
    sa.Column('rows_expected', sa.BigInteger(), nullable=True),
    sa.Column('rows_written', sa.BigInteger(), nullable=False),
    sa.Column('bytes_written', sa.BigInteger(), nullable=False),
    sa.Column('volumes_count', sa.Integer(), nullable=False),
    sa.Column('failure_code', sa.String(length=40), nullable=True),
    sa.Column('failure_detail', sa.String(length=1000), nullable=True),
    sa.Column('job_id', sa.String(length=100), nullable=True),
    sa.Column('dispatched_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('progress_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('cancelled_by_id', sa.Integer(), nullable=True),
    sa.Column('lease_holder', sa.String(length=200), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("(trigger = 'cadence') = (cadence_key IS NOT NULL)", name=op.f('ck_data_export_executions_cadence_key')),
    sa.CheckConstraint("phase IS NULL OR phase IN ('snapshot', 'writing', 'uploading', 'delivering', 'notifying')", name=op.f('ck_data_export_executions_phase')),
    sa.CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name=op.f('ck_data_export_executions_failure_code')),
    sa.CheckConstraint("status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')", name=op.f('ck_data_export_executions_status')),
    sa.CheckConstraint("trigger IN ('manual', 'cadence')", name=op.f('ck_data_export_executions_trigger')),
    sa.ForeignKeyConstraint(['cancelled_by_id'], ['people.id'], name=op.f('fk_data_export_executions_cancelled_by_id_people'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['requested_by_id'], ['people.id'], name=op.f('fk_data_export_executions_requested_by_id_people'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_export_executions_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_executions')),
    sa.UniqueConstraint('workspace_id', 'cadence_key', name='data_export_executions_cadence_uidx')
    )
    with op.batch_alter_table('data_export_executions', schema=None) as batch_op:
        batch_op.create_index('data_export_executions_one_active_uidx', ['workspace_id'], unique=True, postgresql_where=sa.text("status IN ('queued', 'running')"), sqlite_where=sa.text("status IN ('queued', 'running')"))
        batch_op.create_index('ix_data_export_executions_status', ['status'], unique=False)

    op.create_table('data_export_notices',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('subject_type', sa.String(length=10), nullable=False),
    sa.Column('subject_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('person_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('attempt_count', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('message_id', sa.String(length=300), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("kind IN ('package_ready', 'execution_failed', 'delivery_failed')", name=op.f('ck_data_export_notices_kind')),
    sa.CheckConstraint("status IN ('pending', 'sent', 'failed')", name=op.f('ck_data_export_notices_status')),
    sa.CheckConstraint("subject_type IN ('execution', 'package', 'delivery')", name=op.f('ck_data_export_notices_subject_type')),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_data_export_notices_person_id_people'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_export_notices_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_notices')),
    sa.UniqueConstraint('subject_type', 'subject_id', 'kind', 'person_id', name='data_export_notices_once_uidx')
    )
    with op.batch_alter_table('data_export_notices', schema=None) as batch_op:
        batch_op.create_index('ix_data_export_notices_pending', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_data_export_notices_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('data_export_artifacts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uid', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('execution_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('format', sa.String(length=10), nullable=False),
    sa.Column('cutoff_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('prefix', sa.String(length=300), nullable=False),
    sa.Column('manifest_key', sa.String(length=400), nullable=False),
    sa.Column('manifest_size', sa.BigInteger(), nullable=False),
    sa.Column('manifest_sha256', sa.String(length=64), nullable=False),
    sa.Column('datasets_count', sa.Integer(), nullable=False),
    sa.Column('row_count', sa.BigInteger(), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('volumes_count', sa.Integer(), nullable=False),
    sa.Column('retention_days', sa.Integer(), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('settled_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('deleted_by_id', sa.Integer(), nullable=True),
    sa.Column('bytes_removed_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("format IN ('csv', 'jsonl')", name=op.f('ck_data_export_artifacts_format')),
    sa.CheckConstraint("status IN ('available', 'expired', 'deleted')", name=op.f('ck_data_export_artifacts_status')),
    sa.ForeignKeyConstraint(['deleted_by_id'], ['people.id'], name=op.f('fk_data_export_artifacts_deleted_by_id_people'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['execution_id'], ['data_export_executions.id'], name=op.f('fk_data_export_artifacts_execution_id_data_export_executions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_export_artifacts_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_artifacts')),
    sa.UniqueConstraint('execution_id', name='data_export_artifacts_execution_uidx'),
    sa.UniqueConstraint('uid', name=op.f('uq_data_export_artifacts_uid'))
    )
    with op.batch_alter_table('data_export_artifacts', schema=None) as batch_op:
        batch_op.create_index('ix_data_export_artifacts_due', ['status', 'expires_at'], unique=False)

    op.create_table('data_export_job_events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('execution_id', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('phase', sa.String(length=12), nullable=True),
    sa.Column('message', sa.String(length=1000), nullable=False),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind IN ('admitted', 'phase_started', 'phase_finished', 'counts', 'warning', 'error', 'cancelled')", name=op.f('ck_data_export_job_events_kind')),
    sa.ForeignKeyConstraint(['execution_id'], ['data_export_executions.id'], name=op.f('fk_data_export_job_events_execution_id_data_export_executions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_job_events'))
    )
    with op.batch_alter_table('data_export_job_events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_export_job_events_execution_id'), ['execution_id'], unique=False)

    op.create_table('data_export_volumes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('execution_id', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('dataset', sa.String(length=100), nullable=False),
    sa.Column('sequence', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=400), nullable=False),
    sa.Column('upload_id', sa.String(length=300), nullable=True),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('row_count', sa.BigInteger(), nullable=True),
    sa.Column('size_bytes', sa.BigInteger(), nullable=True),
    sa.Column('sha256', sa.String(length=64), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("status <> 'complete' OR (size_bytes IS NOT NULL AND sha256 IS NOT NULL)", name=op.f('ck_data_export_volumes_complete')),
    sa.CheckConstraint("status IN ('uploading', 'complete', 'discarded')", name=op.f('ck_data_export_volumes_status')),
    sa.ForeignKeyConstraint(['execution_id'], ['data_export_executions.id'], name=op.f('fk_data_export_volumes_execution_id_data_export_executions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_volumes')),
    sa.UniqueConstraint('execution_id', 'key', name='data_export_volumes_key_uidx')
    )
    with op.batch_alter_table('data_export_volumes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_export_volumes_execution_id'), ['execution_id'], unique=False)

    op.create_table('data_export_deliveries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('package_id', sa.Integer(), nullable=False),
    sa.Column('destination_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('attempt_count', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('failure_class', sa.String(length=10), nullable=True),
    sa.Column('failure_code', sa.String(length=60), nullable=True),
    sa.Column('failure_summary', sa.String(length=500), nullable=True),
    sa.Column('location', sa.String(length=600), nullable=True),
    sa.Column('replaces_id', sa.Integer(), nullable=True),
    sa.Column('superseded_by_id', sa.Integer(), nullable=True),
    sa.Column('job_id', sa.String(length=100), nullable=True),
    sa.Column('dispatched_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('lease_holder', sa.String(length=200), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("failure_class IS NULL OR failure_class IN ('transient', 'permanent')", name=op.f('ck_data_export_deliveries_failure_class')),
    sa.CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name=op.f('ck_data_export_deliveries_failure_code')),
    sa.CheckConstraint("status IN ('pending', 'delivering', 'delivered', 'failed', 'withheld', 'expired', 'superseded')", name=op.f('ck_data_export_deliveries_status')),
    sa.ForeignKeyConstraint(['destination_id'], ['data_export_destinations.id'], name=op.f('fk_data_export_deliveries_destination_id_data_export_destinations')),
    sa.ForeignKeyConstraint(['package_id'], ['data_export_artifacts.id'], name=op.f('fk_data_export_deliveries_package_id_data_export_artifacts'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['replaces_id'], ['data_export_deliveries.id'], name=op.f('fk_data_export_deliveries_replaces_id_data_export_deliveries')),
    sa.ForeignKeyConstraint(['superseded_by_id'], ['people.id'], name=op.f('fk_data_export_deliveries_superseded_by_id_people'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_data_export_deliveries_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_deliveries'))
    )
    with op.batch_alter_table('data_export_deliveries', schema=None) as batch_op:
        batch_op.create_index('data_export_deliveries_live_uidx', ['package_id', 'destination_id'], unique=True, postgresql_where=sa.text("status <> 'superseded'"), sqlite_where=sa.text("status <> 'superseded'"))
        batch_op.create_index(batch_op.f('ix_data_export_deliveries_destination_id'), ['destination_id'], unique=False)
        batch_op.create_index('ix_data_export_deliveries_due', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_data_export_deliveries_package_id'), ['package_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_data_export_deliveries_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('data_export_parts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('volume_id', sa.Integer(), nullable=False),
    sa.Column('part_number', sa.Integer(), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['volume_id'], ['data_export_volumes.id'], name=op.f('fk_data_export_parts_volume_id_data_export_volumes'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_parts')),
    sa.UniqueConstraint('volume_id', 'part_number', name=op.f('uq_data_export_parts_volume_id'))
    )
    with op.batch_alter_table('data_export_parts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_export_parts_volume_id'), ['volume_id'], unique=False)

    op.create_table('data_export_delivery_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('delivery_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('outcome', sa.String(length=10), nullable=True),
    sa.Column('failure_class', sa.String(length=10), nullable=True),
    sa.Column('failure_code', sa.String(length=60), nullable=True),
    sa.Column('summary', sa.String(length=500), nullable=True),
    sa.CheckConstraint("failure_class IS NULL OR failure_class IN ('transient', 'permanent')", name=op.f('ck_data_export_delivery_attempts_failure_class')),
    sa.CheckConstraint("outcome IS NULL OR outcome IN ('delivered', 'failed')", name=op.f('ck_data_export_delivery_attempts_outcome')),
    sa.ForeignKeyConstraint(['delivery_id'], ['data_export_deliveries.id'], name=op.f('fk_data_export_delivery_attempts_delivery_id_data_export_deliveries'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_export_delivery_attempts')),
    sa.UniqueConstraint('delivery_id', 'number', name=op.f('uq_data_export_delivery_attempts_delivery_id'))
    )
    with op.batch_alter_table('data_export_delivery_attempts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_export_delivery_attempts_delivery_id'), ['delivery_id'], unique=False)



def downgrade():
    with op.batch_alter_table('data_export_delivery_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_export_delivery_attempts_delivery_id'))

    op.drop_table('data_export_delivery_attempts')
    with op.batch_alter_table('data_export_parts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_export_parts_volume_id'))

    op.drop_table('data_export_parts')
    with op.batch_alter_table('data_export_deliveries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_export_deliveries_workspace_id'))
        batch_op.drop_index(batch_op.f('ix_data_export_deliveries_package_id'))
        batch_op.drop_index('ix_data_export_deliveries_due')
        batch_op.drop_index(batch_op.f('ix_data_export_deliveries_destination_id'))
        batch_op.drop_index('data_export_deliveries_live_uidx', postgresql_where=sa.text("status <> 'superseded'"), sqlite_where=sa.text("status <> 'superseded'"))

    op.drop_table('data_export_deliveries')
    with op.batch_alter_table('data_export_volumes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_export_volumes_execution_id'))

    op.drop_table('data_export_volumes')
    with op.batch_alter_table('data_export_job_events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_export_job_events_execution_id'))

    op.drop_table('data_export_job_events')
    with op.batch_alter_table('data_export_artifacts', schema=None) as batch_op:
        batch_op.drop_index('ix_data_export_artifacts_due')

    op.drop_table('data_export_artifacts')
    with op.batch_alter_table('data_export_notices', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_export_notices_workspace_id'))
        batch_op.drop_index('ix_data_export_notices_pending')

    op.drop_table('data_export_notices')
    with op.batch_alter_table('data_export_executions', schema=None) as batch_op:
        batch_op.drop_index('ix_data_export_executions_status')
        batch_op.drop_index('data_export_executions_one_active_uidx', postgresql_where=sa.text("status IN ('queued', 'running')"), sqlite_where=sa.text("status IN ('queued', 'running')"))

    op.drop_table('data_export_executions')
    with op.batch_alter_table('data_export_destinations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_export_destinations_workspace_id'))
        batch_op.drop_index('data_export_destinations_connection_uidx', postgresql_where=sa.text('removed_at IS NULL'), sqlite_where=sa.text('removed_at IS NULL'))

    op.drop_table('data_export_destinations')
    with op.batch_alter_table('data_export_definitions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_export_definitions_next_cadence_at'))

    op.drop_table('data_export_definitions')
