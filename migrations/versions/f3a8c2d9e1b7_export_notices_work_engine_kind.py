"""Export notices become a kind of the work engine: an attempt sends under a lease (status
'sending', its holder and expiry), and the engine's claim names the job carrying it (job_id,
dispatched_at)

Revision ID: f3a8c2d9e1b7
Revises: b7d2e4f6a8c1
Create Date: 2026-12-07 05:30:00

Existing rows carry over as they are: a pending notice stays pending with its attempt count and
its next_attempt_at, so one waiting for a retry is dispatched once that time comes, one never tried
at once, and one an older sender had claimed (its next_attempt_at pushed a claim period ahead)
once that claim would have lapsed; that sender, should it still finish, is refused by the newer
attempt's count, as before. No row is sending yet.

The downgrade puts a sending notice back to pending, due when its holder's lease lapses: the
older code's claim, whose sender is refused once a newer claim counts another attempt.
"""
from alembic import op
import sqlalchemy as sa

revision = 'f3a8c2d9e1b7'
down_revision = 'b7d2e4f6a8c1'
branch_labels = None
depends_on = None

STATUSES_BEFORE = "status IN ('pending', 'sent', 'failed')"
STATUSES_AFTER = "status IN ('pending', 'sending', 'sent', 'failed')"


def _replace_statuses(batch_op, statuses: str) -> None:
    batch_op.drop_constraint(op.f('ck_data_export_notices_status'), type_='check')
    batch_op.create_check_constraint(op.f('ck_data_export_notices_status'), statuses)


def upgrade():
    with op.batch_alter_table('data_export_notices', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lease_holder', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('job_id', sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column('dispatched_at', sa.DateTime(timezone=True), nullable=True))
        _replace_statuses(batch_op, STATUSES_AFTER)


def downgrade():
    op.execute(
        "UPDATE data_export_notices SET status = 'pending', next_attempt_at = lease_expires_at"
        " WHERE status = 'sending'"
    )
    with op.batch_alter_table('data_export_notices', schema=None) as batch_op:
        _replace_statuses(batch_op, STATUSES_BEFORE)
        batch_op.drop_column('dispatched_at')
        batch_op.drop_column('job_id')
        batch_op.drop_column('lease_expires_at')
        batch_op.drop_column('lease_holder')
