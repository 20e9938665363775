"""Schedules say when a run sends (send_condition, replacing send_when_empty, and whether an
"only when none" alert carries the empty file, alert_with_file); a run records its
decision, the SHA-256 of its file's rows and, when it sends nothing, that it was skipped and why;
a file keeps the digest of the rows it wrote (rows_digest); a schedule may run as each recipient
(run_as_recipients): a run then makes one file per distinct access (schedule_run_files), each
recipient row names the file its link opens (export_id), and a recipient who lost access is
skipped (recipient_access_lost)

Revision ID: a6c4e8f2b1d3
Revises: 96b0685081fb
Create Date: 2026-12-07 06:00:00

Existing schedules keep what they did: a query schedule that did not send when empty sends only
when the file has rows; one that did, and every report schedule (a report was never held back for
being empty), always sends. The downgrade maps back: "only when it has rows" becomes "not when
empty", the others "send when empty" (an "only when none" or "only when changed" schedule then
sends on every occurrence), and a skipped run becomes a succeeded one, as it made its file.
"""
from alembic import op
import sqlalchemy as sa

revision = 'a6c4e8f2b1d3'
down_revision = '96b0685081fb'
branch_labels = None
depends_on = None

# On SQLite a batch copies the table from its reflection, which cannot read an index on an
# expression: the copy of `schedules` would lose its list index, so it is dropped first and made
# again after; each batch reflects only its own table (resolve_fks=False).
LIST_NAME_INDEX = 'ix_schedules_list_name'
LIST_NAME_COLUMNS = ['workspace_id', sa.text('lower(name)'), 'id']
ONLY_THIS_TABLE = {'resolve_fks': False}
SKIP_REASONS_BEFORE = (
    "status <> 'skipped' OR skip_reason IN"
    " ('empty_result', 'recipient_removed', 'recipient_not_allowed', 'recipient_unsubscribed')"
)
SKIP_REASONS_AFTER = (
    "status <> 'skipped' OR skip_reason IN ('empty_result', 'recipient_removed', 'recipient_not_allowed',"
    " 'recipient_unsubscribed', 'recipient_access_lost')"
)
RUN_STATUSES_BEFORE = "status IN ('queued', 'running', 'succeeded', 'failed')"
RUN_STATUSES_AFTER = "status IN ('queued', 'running', 'succeeded', 'failed', 'skipped')"


def _alter_schedules(change) -> None:
    copies_table = op.get_bind().dialect.name == 'sqlite'
    if copies_table:
        op.drop_index(LIST_NAME_INDEX, table_name='schedules')
    with op.batch_alter_table('schedules', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        change(batch_op)
    if copies_table:
        op.create_index(LIST_NAME_INDEX, 'schedules', LIST_NAME_COLUMNS)


def _add_send_condition(batch_op) -> None:
    batch_op.add_column(sa.Column('send_condition', sa.String(length=10), server_default='always', nullable=False))
    batch_op.add_column(sa.Column('alert_with_file', sa.Boolean(), server_default=sa.false(), nullable=False))
    batch_op.add_column(sa.Column('run_as_recipients', sa.Boolean(), server_default=sa.false(), nullable=False))


def _keep_only_send_condition(batch_op) -> None:
    batch_op.create_check_constraint(
        op.f('ck_schedules_send_condition'), "send_condition IN ('always', 'has_rows', 'no_rows', 'changed')"
    )
    batch_op.drop_column('send_when_empty')


def _add_send_when_empty(batch_op) -> None:
    batch_op.add_column(sa.Column('send_when_empty', sa.Boolean(), server_default=sa.false(), nullable=False))


def _keep_only_send_when_empty(batch_op) -> None:
    batch_op.drop_constraint(op.f('ck_schedules_send_condition'), type_='check')
    batch_op.drop_column('run_as_recipients')
    batch_op.drop_column('alert_with_file')
    batch_op.drop_column('send_condition')


def upgrade():
    with op.batch_alter_table('query_exports', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.add_column(sa.Column('rows_digest', sa.String(length=64), nullable=True))

    _alter_schedules(_add_send_condition)
    op.execute(
        "UPDATE schedules SET send_condition = CASE"
        " WHEN kind = 'query' AND NOT send_when_empty THEN 'has_rows' ELSE 'always' END"
    )
    _alter_schedules(_keep_only_send_condition)

    with op.batch_alter_table('schedule_runs', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.add_column(sa.Column('rows_digest', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('decision', sa.String(length=10), nullable=True))
        batch_op.add_column(sa.Column('skip_reason', sa.String(length=200), nullable=True))
        batch_op.drop_constraint(op.f('ck_schedule_runs_status'), type_='check')
        batch_op.create_check_constraint(op.f('ck_schedule_runs_status'), RUN_STATUSES_AFTER)
        batch_op.create_check_constraint(
            op.f('ck_schedule_runs_decision'), "decision IS NULL OR decision IN ('send', 'skip')"
        )
        batch_op.create_check_constraint(
            op.f('ck_schedule_runs_skipped'), "status <> 'skipped' OR (decision = 'skip' AND skip_reason IS NOT NULL)"
        )

    op.create_table(
        'schedule_run_files',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('access_key', sa.String(length=64), nullable=False),
        sa.Column('access', sa.JSON(), nullable=False),
        sa.Column('requester_id', sa.Integer(), nullable=True),
        sa.Column('export_id', sa.Integer(), nullable=True),
        sa.Column('row_count', sa.Integer(), nullable=True),
        sa.Column('rows_digest', sa.String(length=64), nullable=True),
        sa.Column('decision', sa.String(length=10), nullable=True),
        sa.Column('skip_reason', sa.String(length=200), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("decision IS NULL OR decision IN ('send', 'skip')", name=op.f('ck_schedule_run_files_decision')),
        sa.CheckConstraint("decision <> 'skip' OR skip_reason IS NOT NULL", name=op.f('ck_schedule_run_files_skip_reason')),
        sa.ForeignKeyConstraint(['export_id'], ['query_exports.id'], name=op.f('fk_schedule_run_files_export_id_query_exports'), ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['requester_id'], ['people.id'], name=op.f('fk_schedule_run_files_requester_id_people'), ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['run_id'], ['schedule_runs.id'], name=op.f('fk_schedule_run_files_run_id_schedule_runs'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_run_files')),
        sa.UniqueConstraint('run_id', 'access_key', name='schedule_run_files_access_uidx'),
    )
    op.create_index(op.f('ix_schedule_run_files_run_id'), 'schedule_run_files', ['run_id'], unique=False)
    with op.batch_alter_table('query_schedule_deliveries', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.add_column(sa.Column('export_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            op.f('fk_query_schedule_deliveries_export_id_query_exports'), 'query_exports', ['export_id'], ['id'],
            ondelete='SET NULL',
        )
        batch_op.drop_constraint(op.f('ck_query_schedule_deliveries_skip_reason'), type_='check')
        batch_op.create_check_constraint(op.f('ck_query_schedule_deliveries_skip_reason'), SKIP_REASONS_AFTER)


def downgrade():
    op.execute(
        "UPDATE query_schedule_deliveries SET skip_reason = 'recipient_removed'"
        " WHERE skip_reason = 'recipient_access_lost'"
    )
    with op.batch_alter_table('query_schedule_deliveries', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.drop_constraint(op.f('ck_query_schedule_deliveries_skip_reason'), type_='check')
        batch_op.create_check_constraint(op.f('ck_query_schedule_deliveries_skip_reason'), SKIP_REASONS_BEFORE)
        batch_op.drop_constraint(op.f('fk_query_schedule_deliveries_export_id_query_exports'), type_='foreignkey')
        batch_op.drop_column('export_id')
    op.drop_index(op.f('ix_schedule_run_files_run_id'), table_name='schedule_run_files')
    op.drop_table('schedule_run_files')
    op.execute("UPDATE schedule_runs SET status = 'succeeded' WHERE status = 'skipped'")
    with op.batch_alter_table('schedule_runs', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.drop_constraint(op.f('ck_schedule_runs_skipped'), type_='check')
        batch_op.drop_constraint(op.f('ck_schedule_runs_decision'), type_='check')
        batch_op.drop_constraint(op.f('ck_schedule_runs_status'), type_='check')
        batch_op.create_check_constraint(op.f('ck_schedule_runs_status'), RUN_STATUSES_BEFORE)
        batch_op.drop_column('skip_reason')
        batch_op.drop_column('decision')
        batch_op.drop_column('rows_digest')

    _alter_schedules(_add_send_when_empty)
    op.execute("UPDATE schedules SET send_when_empty = (send_condition <> 'has_rows')")
    _alter_schedules(_keep_only_send_when_empty)

    with op.batch_alter_table('query_exports', schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.drop_column('rows_digest')
