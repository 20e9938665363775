"""Schedules deliver to destinations: the destinations a schedule chose, and each run's
delivery to each of them with its attempts

Revision ID: 96b0685081fb
Revises: c4f8a2e6d9b1
Create Date: 2026-12-07 05:06:55

New tables only: every existing schedule chose no destination and keeps sending by email alone.
"""
from alembic import op
import sqlalchemy as sa

revision = '96b0685081fb'
down_revision = 'c4f8a2e6d9b1'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('schedule_destinations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('schedule_id', sa.Integer(), nullable=False),
    sa.Column('destination_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['destination_id'], ['data_export_destinations.id'], name=op.f('fk_schedule_destinations_destination_id_data_export_destinations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['schedule_id'], ['schedules.id'], name=op.f('fk_schedule_destinations_schedule_id_schedules'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_destinations')),
    sa.UniqueConstraint('schedule_id', 'destination_id', name=op.f('uq_schedule_destinations_schedule_id'))
    )
    with op.batch_alter_table('schedule_destinations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_schedule_destinations_destination_id'), ['destination_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_schedule_destinations_schedule_id'), ['schedule_id'], unique=False)

    op.create_table('schedule_destination_deliveries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('destination_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('attempt_count', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('failure_class', sa.String(length=10), nullable=True),
    sa.Column('failure_code', sa.String(length=60), nullable=True),
    sa.Column('failure_summary', sa.String(length=500), nullable=True),
    sa.Column('target_key', sa.String(length=500), nullable=False),
    sa.Column('location', sa.String(length=600), nullable=True),
    sa.Column('job_id', sa.String(length=100), nullable=True),
    sa.Column('dispatched_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('lease_holder', sa.String(length=200), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("failure_class IS NULL OR failure_class IN ('transient', 'permanent')", name=op.f('ck_schedule_destination_deliveries_failure_class')),
    sa.CheckConstraint("status <> 'failed' OR failure_code IS NOT NULL", name=op.f('ck_schedule_destination_deliveries_failure_code')),
    sa.CheckConstraint("status IN ('pending', 'delivering', 'delivered', 'failed')", name=op.f('ck_schedule_destination_deliveries_status')),
    sa.ForeignKeyConstraint(['destination_id'], ['data_export_destinations.id'], name=op.f('fk_schedule_destination_deliveries_destination_id_data_export_destinations')),
    sa.ForeignKeyConstraint(['run_id'], ['schedule_runs.id'], name=op.f('fk_schedule_destination_deliveries_run_id_schedule_runs'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_schedule_destination_deliveries_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_destination_deliveries')),
    sa.UniqueConstraint('run_id', 'destination_id', name='schedule_destination_deliveries_run_uidx')
    )
    with op.batch_alter_table('schedule_destination_deliveries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_schedule_destination_deliveries_destination_id'), ['destination_id'], unique=False)
        batch_op.create_index('ix_schedule_destination_deliveries_due', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_schedule_destination_deliveries_run_id'), ['run_id'], unique=False)
        batch_op.create_index('ix_schedule_destination_deliveries_staff_status', ['status', 'created_at', 'id'], unique=False)
        batch_op.create_index('ix_schedule_destination_deliveries_staff_time', ['created_at', 'id'], unique=False)
        batch_op.create_index('ix_schedule_destination_deliveries_staff_workspace', ['workspace_id', 'created_at', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_schedule_destination_deliveries_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('schedule_destination_delivery_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('delivery_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('outcome', sa.String(length=10), nullable=True),
    sa.Column('failure_class', sa.String(length=10), nullable=True),
    sa.Column('failure_code', sa.String(length=60), nullable=True),
    sa.Column('summary', sa.String(length=500), nullable=True),
    sa.CheckConstraint("failure_class IS NULL OR failure_class IN ('transient', 'permanent')", name=op.f('ck_schedule_destination_delivery_attempts_failure_class')),
    sa.CheckConstraint("outcome IS NULL OR outcome IN ('delivered', 'failed')", name=op.f('ck_schedule_destination_delivery_attempts_outcome')),
    sa.ForeignKeyConstraint(['delivery_id'], ['schedule_destination_deliveries.id'], name=op.f('fk_schedule_destination_delivery_attempts_delivery_id_schedule_destination_deliveries'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_destination_delivery_attempts')),
    sa.UniqueConstraint('delivery_id', 'number', name=op.f('uq_schedule_destination_delivery_attempts_delivery_id'))
    )
    with op.batch_alter_table('schedule_destination_delivery_attempts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_schedule_destination_delivery_attempts_delivery_id'), ['delivery_id'], unique=False)



def downgrade():
    with op.batch_alter_table('schedule_destination_delivery_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_schedule_destination_delivery_attempts_delivery_id'))

    op.drop_table('schedule_destination_delivery_attempts')
    with op.batch_alter_table('schedule_destination_deliveries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_schedule_destination_deliveries_workspace_id'))
        batch_op.drop_index('ix_schedule_destination_deliveries_staff_workspace')
        batch_op.drop_index('ix_schedule_destination_deliveries_staff_time')
        batch_op.drop_index('ix_schedule_destination_deliveries_staff_status')
        batch_op.drop_index(batch_op.f('ix_schedule_destination_deliveries_run_id'))
        batch_op.drop_index('ix_schedule_destination_deliveries_due')
        batch_op.drop_index(batch_op.f('ix_schedule_destination_deliveries_destination_id'))

    op.drop_table('schedule_destination_deliveries')
    with op.batch_alter_table('schedule_destinations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_schedule_destinations_schedule_id'))
        batch_op.drop_index(batch_op.f('ix_schedule_destinations_destination_id'))

    op.drop_table('schedule_destinations')
