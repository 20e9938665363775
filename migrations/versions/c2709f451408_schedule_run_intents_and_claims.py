"""schedule runs: one "Run now" per form and per active manual run; recipient claims by attempt

Revision ID: c2709f451408
Revises: 268f3c78bf9c
Create Date: 2026-12-02 02:00:00

schedule_runs.request_token holds the "Run now" form's key, unique per schedule, and a partial
unique index admits at most one queued or running manual run per schedule.
query_schedule_deliveries.claimed_attempt names the run attempt holding a recipient row's claim.
"""

from alembic import op
import sqlalchemy as sa

revision = "c2709f451408"
down_revision = '268f3c78bf9c'
branch_labels = None
depends_on = None

ACTIVE_MANUAL_RUN = "trigger = 'manual' AND status IN ('queued', 'running')"
# On SQLite a batch copies the table from its reflection; reflecting the tables it references too
# would skip their indexes on expressions with a warning each, so only the table itself is read.
ONLY_THIS_TABLE = {"resolve_fks": False}


def upgrade():
    with op.batch_alter_table("schedule_runs", schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.add_column(sa.Column("request_token", sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint("schedule_runs_request_token_uidx", ["schedule_id", "request_token"])
        batch_op.create_index(
            "schedule_runs_one_active_manual_uidx",
            ["schedule_id"],
            unique=True,
            postgresql_where=sa.text(ACTIVE_MANUAL_RUN),
            sqlite_where=sa.text(ACTIVE_MANUAL_RUN),
        )
    with op.batch_alter_table("query_schedule_deliveries", schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.add_column(sa.Column("claimed_attempt", sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table("query_schedule_deliveries", schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.drop_column("claimed_attempt")
    with op.batch_alter_table("schedule_runs", schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.drop_index(
            "schedule_runs_one_active_manual_uidx",
            postgresql_where=sa.text(ACTIVE_MANUAL_RUN),
            sqlite_where=sa.text(ACTIVE_MANUAL_RUN),
        )
        batch_op.drop_constraint("schedule_runs_request_token_uidx", type_="unique")
        batch_op.drop_column("request_token")
