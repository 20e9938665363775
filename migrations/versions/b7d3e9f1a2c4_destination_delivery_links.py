"""A schedule run's delivery to a destination has a download link: the random nonce a webhook's
signed link names (link_nonce) and the downloads made through it (download_count,
last_downloaded_at)

Revision ID: b7d3e9f1a2c4
Revises: a6c4e8f2b1d3
Create Date: 2026-12-07 11:00:00

Existing rows get a nonce each, made here from the operating system's random source as the app
makes them (a database's random() is not meant for secrets), and no downloads. The downgrade drops
the columns: the links already sent in webhooks' messages stop opening.
"""
import secrets

from alembic import op
import sqlalchemy as sa

revision = 'b7d3e9f1a2c4'
down_revision = 'a6c4e8f2b1d3'
branch_labels = None
depends_on = None

TABLE = 'schedule_destination_deliveries'
ONLY_THIS_TABLE = {'resolve_fks': False}


def upgrade():
    with op.batch_alter_table(TABLE, schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.add_column(sa.Column('link_nonce', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('download_count', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('last_downloaded_at', sa.DateTime(timezone=True), nullable=True))

    deliveries = sa.table(
        TABLE, sa.column('id', sa.Integer()), sa.column('link_nonce', sa.String()), sa.column('download_count', sa.Integer())
    )
    bind = op.get_bind()
    ids = bind.execute(sa.select(deliveries.c.id)).scalars().all()
    if ids:
        bind.execute(
            deliveries.update()
            .where(deliveries.c.id == sa.bindparam('row_id'))
            .values(link_nonce=sa.bindparam('nonce'), download_count=0),
            [{'row_id': row_id, 'nonce': secrets.token_urlsafe(32)} for row_id in ids],
        )

    with op.batch_alter_table(TABLE, schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.alter_column('link_nonce', existing_type=sa.String(length=64), nullable=False)
        batch_op.alter_column('download_count', existing_type=sa.Integer(), nullable=False)
        batch_op.create_unique_constraint(batch_op.f('uq_schedule_destination_deliveries_link_nonce'), ['link_nonce'])


def downgrade():
    with op.batch_alter_table(TABLE, schema=None, reflect_kwargs=ONLY_THIS_TABLE) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_schedule_destination_deliveries_link_nonce'), type_='unique')
        batch_op.drop_column('last_downloaded_at')
        batch_op.drop_column('download_count')
        batch_op.drop_column('link_nonce')
