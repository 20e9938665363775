"""people.session_token: sessions carry it instead of the person's id, so rotating it ends them

Revision ID: 5b1f0c7d2e94
Revises: 990cfeb60486
Create Date: 2026-12-01 00:20:00.000000

"""
import secrets

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '5b1f0c7d2e94'
down_revision = '990cfeb60486'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('people') as batch_op:
        batch_op.add_column(sa.Column('session_token', sa.String(length=64), nullable=True))
    people = sa.table('people', sa.column('id', sa.Integer()), sa.column('session_token', sa.String(length=64)))
    connection = op.get_bind()
    for (person_id,) in connection.execute(sa.select(people.c.id)).all():
        connection.execute(
            people.update().where(people.c.id == person_id).values(session_token=secrets.token_urlsafe(32))
        )
    with op.batch_alter_table('people') as batch_op:
        batch_op.alter_column('session_token', existing_type=sa.String(length=64), nullable=False)
        batch_op.create_unique_constraint(batch_op.f('uq_people_session_token'), ['session_token'])


def downgrade():
    with op.batch_alter_table('people') as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_people_session_token'), type_='unique')
        batch_op.drop_column('session_token')
